"""The Run view's agent sessions: live turn, tool calls, tokens (estimated, then metered), time."""

from __future__ import annotations

import time

from eloledger.agents.events import SessionState
from eloledger.agents.usage import CallUsage
from eloledger.runner.counters import RunCounters
from eloledger.tui.agent_sessions import AgentSessions
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.run_view import RunView
from eloledger.tui.sources import SnapshotSource
from eloledger.tui.testing import screen_text, until


def _line_of(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


async def _first_line_starting(app: EloLedgerApp, start: str) -> str:
    """The first screen line that starts with ``start``, waited for (a busy machine draws late)."""

    def lines() -> list[str]:
        return [x for x in screen_text(app).splitlines() if x.startswith(start)]

    assert await until(lambda: bool(lines())), screen_text(app)
    return lines()[0]


def _agent_mean(app: EloLedgerApp) -> str:
    """The session's line on screen ("" before it is drawn)."""
    return next((line for line in screen_text(app).splitlines() if "agent-mean" in line), "")


async def test_sessions_move_live_then_finish_from_their_ledger_row() -> None:
    counters = RunCounters(concurrency=2)
    counters.arm("claude-8").planned = 2
    state = SessionState(agent="claude-code", task_id="agent-mean", arm="claude-8")
    state.started = time.monotonic() - 65
    app = EloLedgerApp(source=SnapshotSource(counters, label="agents", state="running"))
    async with app.run_test(size=(110, 40)):
        view = app.query_one("#run-view", RunView)
        # the view has pulled the counters (the panel would be mounted then) and drawn them
        assert await until(lambda: view.ticks >= 2 and "claude-8" in screen_text(app))
        assert not app.query(AgentSessions)  # no agent sessions: no panel
        assert "tools" not in screen_text(app)
        counters.agent_sessions[("agent-mean", "claude-8", 0, 0)] = state
        state.turns, state.tool_calls, state.est_tokens = 3, 2, 4321
        assert await until(lambda: "~4.32k" in _agent_mean(app)), screen_text(app)
        line = _line_of(screen_text(app), "agent-mean")
        assert "running" in line and " claude-code " in line and "~4.32k" in line
        assert line.split()[5:7] == ["3", "2"]  # turn, tool calls
        minutes, seconds = line.split()[8].split(":")
        assert 65 <= 60 * int(minutes) + int(seconds) < 125  # elapsed (the app may start slowly)
        ticks = view.ticks
        state.set_report({"m": CallUsage(prompt_tokens=900, completion_tokens=1)})  # a claim
        # two pulls of the counters since (each moves the line's time on: it is redrawn)
        assert await until(lambda: view.ticks > ticks + 1)
        assert "~4.32k" in _line_of(screen_text(app), "agent-mean")  # still the estimate
        state.add_metered(CallUsage(prompt_tokens=5000, completion_tokens=120))  # the meter's
        assert await until(lambda: "5.12k" in _agent_mean(app)), screen_text(app)
        assert "5.12k" in _line_of(screen_text(app), "agent-mean")  # exact: no "~"
        assert "~" not in _line_of(screen_text(app), "agent-mean")
        del counters.agent_sessions[("agent-mean", "claude-8", 0, 0)]
        counters.apply_row(
            {"arm": "claude-8", "task_id": "agent-mean", "sample": 0, "status": "error",
             "error_class": "max_turns", "agent": "claude-code", "turns": 8, "tool_calls": 5,
             "total_tokens": 9000, "latency_ms": 70000}
        )  # fmt: skip
        assert await until(
            lambda: any(x.startswith("max_turns") for x in screen_text(app).splitlines())
        ), screen_text(app)
        text = screen_text(app)
        # the sessions list: a failed session shows its error class where the status goes
        line = next(x for x in text.splitlines() if x.startswith("max_turns"))
        assert " claude-code " in line and "agent-mean" in line and "9k" in line and "01:10" in line
        assert line.split()[5:7] == ["8", "5"]
        assert not any(x.startswith("running") for x in text.splitlines())


async def test_the_sessions_panel_fits_80_columns() -> None:
    """Found at 80x24 in tmux: the token and time columns were cut off the right edge."""
    counters = RunCounters(concurrency=2)
    app = EloLedgerApp(source=SnapshotSource(counters, label="agents", state="running"))
    async with app.run_test(size=(80, 24)):
        counters.apply_row(
            {"arm": "a-long-arm-name", "task_id": "agent-fizzbuzz-long", "sample": 2,
             "status": "error", "error_class": "max_turns", "agent": "gemini-cli", "turns": 12,
             "tool_calls": 34, "total_tokens": 1234567, "latency_ms": 754000}
        )  # fmt: skip
        line = await _first_line_starting(app, "max_turns")  # drawn within 30 s
        assert line.rstrip().endswith("12:34") and "1.23M" in line, line
        assert line.split()[4:8] == ["gemini-cli", "12", "34", "1.23M"], line


def test_agent_report_and_log_usage_count_as_reported_not_estimated() -> None:
    """Found at 80x24 watching the agent demo: "server-reported 0 calls" for 24 sessions whose
    tokens came from the CLIs' final reports."""
    counters = RunCounters()
    for source in ("report", "log", "server", "estimated"):
        counters.apply_row({"arm": "a", "status": "ok", "total_tokens": 10, "usage_source": source})
    assert counters.server_reported_calls == 3 and counters.estimated_calls == 1
