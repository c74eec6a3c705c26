"""A gateway that sends no usage: the TUI says so loudly (TUI part).

A real `eloledger run` against the strict gateway (not the simulator) in mode
``stream_no_usage`` writes a ledger of character estimates. Watching it, opening its Elo table
and running the same spec inside the app must each show a warning that names the arms, says
the tokens are eloledger's estimate and gives the fix; a ledger with server usage shows none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_ledger_estimated import SPEC, add_gateway_profile, run_against_gateway

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.run_view import RunView
from eloledger.tui.testing import run_summary_whole, screen_text, until
from strict_gateway import GOOD_KEY, GatewayConfig, serve


def _run_ledger(tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ledger written by `eloledger run` against the strict gateway in ``mode``."""
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    return run_against_gateway(tmp_path, mode)[0]


def _usage_sources(ledger: Path) -> set[str]:
    return {json.loads(line)["usage_source"] for line in ledger.read_text().splitlines()}


def _assert_estimate_warning(text: str) -> None:
    lines = text.splitlines()
    warning = next(line for line in lines if "ESTIMATE (gateway sent no usage)" in line)
    assert "one (4)" in warning and "three (12)" in warning, warning
    assert any("ESTIMATED 16 calls" in line for line in lines), text
    assert any("'eloledger doctor'" in line and "include_usage" in line for line in lines), text


async def _watch_text(ledger: Path, ready: str) -> tuple[str, str]:
    """The screen of the Run view following ``ledger`` once ``ready`` shows, and its markup."""
    app = EloLedgerApp(watch=ledger)
    async with app.run_test(size=(80, 24)):
        drawn = await until(lambda: ready in screen_text(app) and run_summary_whole(app), 20)
        assert drawn, screen_text(app)
        return screen_text(app), app.query_one(RunView)._summary_text


async def _elo_tab_text(ledger: Path) -> tuple[str, bool]:
    """The screen of the Elo tab on the run's comparisons + ledger, and whether its
    estimated-usage line is displayed."""
    comparisons = ledger.with_name("l.comparisons.csv")
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comparisons, ledger))
    async with app.run_test(size=(80, 24)):
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None, 20)
        # the line under the table: what is above it (the usage line too) is laid out
        assert await until(lambda: "rows: knee" in screen_text(app)), screen_text(app)
        usage = tab.query_one("#elo-usage")
        return screen_text(app), bool(usage.display and usage.region.height >= 1)


async def test_watched_estimated_ledger_warns_in_run_view_and_elo_tab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = _run_ledger(tmp_path, "stream_no_usage", monkeypatch)
    assert _usage_sources(ledger) == {"estimated"}
    text, markup = await _watch_text(ledger, "ESTIMATE")
    _assert_estimate_warning(text)
    assert "[b $warning]Usage" in markup  # the Usage line itself is in warning style
    assert all(len(line) <= 80 for line in text.splitlines())

    text, shown = await _elo_tab_text(ledger)
    assert shown
    assert "ESTIMATED token counts" in text and "one (4 calls" in text, text
    assert "include_usage" in text


async def test_server_usage_ledger_shows_no_estimate_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = _run_ledger(tmp_path, "ok", monkeypatch)
    assert _usage_sources(ledger) == {"server"}
    text, markup = await _watch_text(ledger, "server-reported 16 calls")
    assert "ESTIMATE" not in text and "include_usage" not in text
    assert "$warning" not in markup
    text, shown = await _elo_tab_text(ledger)
    assert not shown and "ESTIMATED" not in text


async def test_live_run_in_the_app_warns_about_estimated_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    with serve(GatewayConfig(mode="stream_no_usage")) as gw:
        add_gateway_profile(gw.root)
        app = EloLedgerApp()
        async with app.run_test(size=(80, 24)):
            app.start_run(spec)
            live = app.live_source
            assert live is not None
            assert await until(lambda: live.counters.estimated_calls == 16, 60)
            app.action_show_tab("run")
            assert await until(
                lambda: "ESTIMATED 16 calls" in screen_text(app) and run_summary_whole(app)
            ), screen_text(app)
            _assert_estimate_warning(screen_text(app))


async def test_watched_zero_usage_rows_are_missing_usage_not_free_calls(tmp_path: Path) -> None:
    """A gateway that drops usage (claude-code-router on streams) leaves ok rows saying 0
    tokens: the Run view counts them as missing usage and names the arm, as ``tokens`` and
    ``doctor --ledger`` do, instead of server-reported free calls."""
    ledger = tmp_path / "zero.jsonl"
    rows = [
        {"ts": 1.0 + k, "role": "sample", "task_id": f"t{k}", "arm": arm, "sample": 0,
         "status": "ok", "usage_source": "server", "prompt_tokens": tokens,
         "completion_tokens": tokens, "total_tokens": 2 * tokens}
        for k, (arm, tokens) in enumerate([("relayed", 0), ("relayed", 0), ("direct", 40)])
    ]  # fmt: skip
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text, markup = await _watch_text(ledger, "MISSING 2")
    assert "server-reported 1 calls" in text
    warning = next(line for line in text.splitlines() if "ZERO usage" in line)
    assert "relayed (2)" in warning and "direct" not in warning
    assert "[b $warning]Usage" in markup
