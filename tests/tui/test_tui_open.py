"""Open a spec or watch a ledger from the app and honest messages (item 8)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from textual.widgets import Input

from eloledger.ledger import LedgerWriter
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import HelpScreen, PathScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.sources import LedgerWatch, LiveRun
from eloledger.tui.testing import screen_text, until

SPEC = """\
[experiment]
name = "tiny"
profile = "sim"
model = "sim-small"
ledger = "tiny.ledger.jsonl"
concurrency = 4

[tasks]
source = "builtin:arith"
limit = 3

[sim]
speed = 20.0

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "two"
kind = "best_of_n"
n = 2
select = "verifier"
"""


def flat_screen(app: EloLedgerApp) -> str:
    """The screen's lines joined, each stripped (a sentence may wrap)."""
    return " ".join(line.strip() for line in screen_text(app).splitlines())


async def test_w_watches_a_ledger_typed_in_the_run_tab(tmp_path: Path) -> None:
    ledger = tmp_path / "other.jsonl"
    with LedgerWriter(ledger) as w:
        w.append({"task_id": "t", "arm": "a", "status": "ok", "total_tokens": 42})
    app = EloLedgerApp(initial_tab="run")
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("w")
        assert await until(lambda: isinstance(app.focused, Input))  # the path dialog's field
        assert isinstance(app.screen, PathScreen)
        await pilot.press(*str(tmp_path / "nope" / "x.jsonl"), "enter")
        assert await until(lambda: "no such folder" in screen_text(app)), screen_text(app)
        app.screen.query_one("#path-input").value = ""
        await pilot.press(*str(ledger), "enter")
        assert await until(lambda: isinstance(app.live_source, LedgerWatch))
        assert await until(lambda: app.live_source.counters.total_tokens == 42)


async def test_o_opens_a_spec_and_runs_it_then_fills_the_elo_tab(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC, encoding="utf-8")
    app = EloLedgerApp(initial_tab="run")
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("o")
        assert await until(lambda: isinstance(app.focused, Input))  # the path dialog's field
        await pilot.press(*str(spec), "enter")
        assert await until(lambda: isinstance(app.live_source, LiveRun))
        assert await until(lambda: app.live_source.state() == "finished", 90)
        assert (tmp_path / "tiny.ledger.jsonl").is_file()
        assert await until(lambda: app.query_one(EloTab).data is not None)


async def test_a_cancelled_run_says_why_the_elo_tab_is_empty(tmp_path: Path) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # app is up
        result = SimpleNamespace(
            stopped="cancelled", ledger_path=tmp_path / "x.jsonl", comparisons_path=None
        )
        app._run_finished(result)
        await pilot.press("4")
        why = "cancelled before its answers were judged"
        assert await until(lambda: why in flat_screen(app)), flat_screen(app)
        text = flat_screen(app)
        assert "cancelled before its answers were judged" in text
        assert "Fitting" not in text


async def test_help_and_cancel_dialog_agree_on_calls_in_flight() -> None:
    from eloledger.tui.dialogs import HELP_TEXT

    assert "calls in flight are aborted" in HELP_TEXT.replace("\n", " ")
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        assert await until(lambda: isinstance(app.screen, HelpScreen))


async def test_judge_no_verdict_counts_are_reported_when_present(tmp_path: Path) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24), notifications=True):
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # app is up
        arms = [{"arm": "a", "judge_no_verdict": 2}, {"arm": "b", "judge_no_verdict": 1}]
        result = SimpleNamespace(
            stopped="cancelled", ledger_path=tmp_path / "x.jsonl", comparisons_path=None, arms=arms
        )
        app._run_finished(result)
        said = "3 judge call(s) gave no verdict"
        assert await until(lambda: any(said in n.message for n in app._notifications))
