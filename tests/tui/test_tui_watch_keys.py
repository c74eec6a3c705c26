"""Keys while watching and everywhere: no demo key in watch mode (it would replace the
followed run), `q` quits from any screen but types into a text field, and `--from-end` says
what it counts instead of gauging a part against the whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from eloledger.ledger import LedgerWriter
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import ConfirmScreen, HelpScreen, PathScreen
from eloledger.tui.history_view import HistoryScreen
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.testing import footer_current, screen_text, until

SPEC = """\
[experiment]
name = "exp"
profile = "sim"
model = "sim-small"
ledger = "exp.jsonl"

[budget]
max_total_tokens = 9000

[tasks]
source = "builtin:arith"
limit = 3

[[arms]]
name = "a"
kind = "single"
"""


def footer_line(app: EloLedgerApp) -> str:
    return screen_text(app).splitlines()[-1]


def append(path: Path, rows: int, arm: str = "a") -> None:
    with LedgerWriter(path) as writer:
        for i in range(rows):
            writer.append({"task_id": f"t{i}", "arm": arm, "status": "ok", "total_tokens": 100})


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_watch_mode_offers_no_demo_and_ctrl_r_keeps_the_run(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    ledger = tmp_path / "exp.jsonl"
    append(ledger, 3)
    app = EloLedgerApp(watch=ledger)
    async with app.run_test(size=size) as pilot:
        assert await until(lambda: app.live_source.counters.total_tokens == 300)
        # the Run view's keys, once the footer is recomposed for them and drawn
        assert await until(lambda: footer_current(app) and "Pause view" in footer_line(app)), (
            footer_line(app)
        )
        footer = footer_line(app)
        assert "Pause view" in footer
        assert "^r" not in footer and "Demo" not in footer
        watched = app.live_source
        await pilot.press("ctrl+r")
        await pilot.pause()  # the key's action (a demo would start in it) has run
        assert app.live_source is watched  # still the followed ledger, no demo started
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert "Run the demo" not in commands


async def test_the_app_offers_the_demo_when_not_watching() -> None:
    app = EloLedgerApp(initial_tab="run")
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: "^r" in footer_line(app)), footer_line(app)
        assert "Run the demo" in [c.title for c in app.get_system_commands(app.screen)]


@pytest.mark.parametrize("where", ["tab", "help", "dialog", "history"])
async def test_q_quits_from_every_screen(where: str) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # app is up
        shown = {"help": HelpScreen, "dialog": ConfirmScreen, "history": HistoryScreen}
        if where == "help":
            await pilot.press("f1")
        elif where == "dialog":
            app.push_screen(ConfirmScreen("Cancel the run?"))
        elif where == "history":
            await pilot.press("h")
        if where in shown:  # up, with the focus in it
            assert await until(lambda: isinstance(app.screen, shown[where]) and app.focused)
        await pilot.press("q")
        assert await until(lambda: not app.is_running), f"q did not quit from the {where}"


async def test_q_types_into_a_text_field() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(PathScreen("Ledger:", "x.jsonl", must_exist=False))
        assert await until(lambda: isinstance(app.focused, Input))  # the path field
        await pilot.press("q", "a")
        assert app.is_running
        assert app.screen.query_one("#path-input").value == "qa"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_from_end_counts_since_attach_and_says_so(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    folder = tmp_path / ("a-long-folder-name-" * 5)  # the status line stays one line
    folder.mkdir()
    (folder / "exp.toml").write_text(SPEC, encoding="utf-8")
    ledger = folder / "exp.jsonl"
    append(ledger, 2)
    app = EloLedgerApp(watch=ledger, from_start=False)
    async with app.run_test(size=size):
        assert await until(lambda: app.live_source.polls >= 1)  # attached at the end: read once
        append(ledger, 1)
        assert await until(lambda: app.live_source.counters.total_tokens == 100)
        # the status line says what the numbers count (the view refreshes at 10 Hz)
        # (status line and budget line repaint on their own ticks: wait for both)
        said = ("since attach at", "no gauge (--from-end)", "limit 9,000")
        shown = await until(lambda: all(words in screen_text(app) for words in said))
        assert shown, screen_text(app)
        text = screen_text(app)
        status = next(line for line in text.splitlines() if "●" in line)
        assert "exp.jsonl" in status and "since attach at" in status, text  # one line, path cut
        assert "%" not in text.split("Budget", 1)[1].splitlines()[0]  # no part-of-whole gauge
        assert app.live_source.counters.arms["a"].planned == 0  # no bar against the whole plan
        budget = next(line for line in text.splitlines() if "Budget" in line)
        assert len(budget.rstrip()) <= size[0]
