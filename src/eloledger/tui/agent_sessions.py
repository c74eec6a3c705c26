"""Agent sessions in the Run view: one line per session, running ones first.

A running session shows what its CLI's event stream has said so far (turn, tool calls,
tokens: ``~`` while estimated, exact once the meter counted a call, and elapsed time); the
runner's live ``SessionState`` objects sit in ``RunCounters.agent_sessions``. Finished
sessions come from the counters' request lines, which a followed ledger fills as well, so
``eloledger watch`` shows the same list. Pulled by the Run view's timer, never per event.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from eloledger.runner.counters import RunCounters
from eloledger.tui import fmt
from eloledger.tui.line_list import Cells, LineList

FINISHED_SHOWN = 50
_STATUS_CLASS = {"running": "line-list--warn", "ok": "line-list--ok", "error": "line-list--error"}


@dataclass(frozen=True)
class SessionLine:
    status: str  # running | ok | error
    arm: str
    task_id: str
    sample: int
    agent: str
    turns: int
    tool_calls: int
    tokens: int
    exact: bool  # False while the tokens are the stream's estimate
    elapsed_s: float | None
    error_class: str | None = None


def session_lines(counters: RunCounters, now: float | None = None) -> list[SessionLine]:
    """Running sessions (oldest first), then the most recent finished ones (newest first)."""
    now = time.monotonic() if now is None else now
    lines = []
    for (task_id, arm, _session, sample), s in list(counters.agent_sessions.items()):
        lines.append(
            SessionLine("running", arm, task_id, sample, s.agent, s.turns, s.tool_calls,
                        s.tokens, s.metered is not None, now - s.started)
        )  # fmt: skip
    lines.sort(key=lambda x: -(x.elapsed_s or 0))
    finished = [r for r in reversed(counters.requests) if r.agent]
    for r in finished[:FINISHED_SHOWN]:
        lines.append(
            SessionLine(r.status, r.arm, r.task_id, r.sample, r.agent, r.turns or 0,
                        r.tool_calls or 0, r.tokens, True,
                        None if r.latency_ms is None else r.latency_ms / 1000, r.error_class)
        )  # fmt: skip
    return lines


def session_cells(line: SessionLine, width: int) -> Cells:
    """One session in 75 columns (the panel fits 80): a failed session shows its error class
    where the status goes; the agent's name is shown whole (``claude-code`` is 11 columns),
    the arm and task are cut to 11."""
    tokens = fmt.compact(line.tokens) if line.exact else "~" + fmt.compact(line.tokens)
    elapsed = fmt.duration(line.elapsed_s) if line.elapsed_s is not None else "-"
    status = line.error_class if line.status == "error" and line.error_class else line.status
    return [
        (fmt.fit(status, 9) + " ", _STATUS_CLASS.get(line.status, "")),
        (fmt.fit(line.arm, 11) + " ", "line-list--accent"),
        (fmt.fit(line.task_id, 11) + " ", ""),
        (f"#{line.sample}".rjust(3) + " ", "line-list--dim"),
        (fmt.fit(line.agent, 11) + " ", "line-list--dim"),
        (str(line.turns).rjust(4) + " ", ""),
        (str(line.tool_calls).rjust(5) + " ", ""),
        (tokens.rjust(7) + " ", "" if line.exact else "line-list--dim"),
        (elapsed.rjust(6), ""),
    ]


HEADER = (
    f"{'session'.ljust(9)} {'arm'.ljust(11)} {'task'.ljust(11)} {'#'.rjust(3)} "
    f"{'agent'.ljust(11)} {'turn'.rjust(4)} {'tools'.rjust(5)} {'tokens'.rjust(7)} "
    f"{'time'.rjust(6)}"
)


def sync_agent_sessions(view: Widget, counters: RunCounters) -> None:
    """The Run view's hook, called at 10 Hz: mount the panel (above the request list) the
    first time the run shows an agent session, then keep it in sync; a run without agents
    never gets the widget, so its layout is exactly what it was."""
    panels = view.query(AgentSessions)
    if panels:
        panels.first().sync(counters)
        return
    last = counters.requests[-1] if counters.requests else None
    if counters.agent_sessions or (last is not None and last.agent):
        panel = AgentSessions(id="run-agent-sessions")
        view.mount(panel, before="#run-requests-heading")
        view.call_after_refresh(panel.sync, counters)


class AgentSessions(Vertical):
    """One line per agent session (running first); see :func:`sync_agent_sessions`."""

    DEFAULT_CSS = """
    AgentSessions { height: auto; max-height: 12; }
    AgentSessions .run-heading { height: 1; color: $text-muted; text-style: bold; }
    AgentSessions #agent-session-list { height: auto; max-height: 10; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[SessionLine] = []

    def compose(self) -> ComposeResult:
        yield Static(HEADER, classes="run-heading")
        yield LineList(self.lines, session_cells, follow=False, id="agent-session-list")

    def on_mount(self) -> None:
        self.query_one("#agent-session-list", LineList).can_focus = False  # keys go to requests

    def sync(self, counters: RunCounters | None) -> None:
        lines = session_lines(counters) if counters is not None else []
        if not lines and not self.lines:
            return  # nothing shown, nothing to show: touch no style (no relayout per tick)
        listing = self.query_one("#agent-session-list", LineList)
        if len(lines) != len(self.lines):
            listing.styles.height = max(1, min(len(lines), 10))
        self.lines[:] = lines
        listing.sync()
