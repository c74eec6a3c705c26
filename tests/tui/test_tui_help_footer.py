"""F1 help says escape closes it, and it does; the footer
shows ctrl+p (the command palette) on every tab at 80×24 and 120×40."""

from __future__ import annotations

from functools import partial
from importlib import resources
from pathlib import Path

import pytest
from test_tui_fit import footer_drawn

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import HelpScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, tables_measured, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))
SIZES = [(80, 24), (120, 40)]


def first_words(app: EloLedgerApp) -> str:
    """The screen's first 60 words: what the help shows first."""
    return " ".join(screen_text(app).split()[:60])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_help_says_escape_closes_it_and_escape_does(size) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        await pilot.press("f1")
        assert await until(lambda: isinstance(app.screen, HelpScreen))
        closes = "escape (or F1) closes this help"
        assert await until(lambda: closes in first_words(app)), first_words(app)
        await pilot.press("escape")
        assert await until(lambda: not isinstance(app.screen, HelpScreen))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_footer_shows_the_palette_key_on_every_tab(size) -> None:
    app = EloLedgerApp(elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl"))
    async with app.run_test(size=size) as pilot:
        assert await until(lambda: app.query_one(EloTab).data is not None)
        for key, tab in (("1", "profiles"), ("2", "run"), ("3", "doctor"), ("4", "elo")):
            await pilot.press("escape", key)
            assert await until(partial(footer_drawn, app, tab)), (key, screen_text(app))
            footer = screen_text(app).splitlines()[-1]
            assert footer.rstrip().endswith("^p palette"), (key, footer)
            assert "f1 Help" in footer, (key, footer)  # and nothing cut before it
        await pilot.press("ctrl+p")
        assert await until(lambda: type(app.screen).__name__ == "CommandPalette")


async def test_elo_palette_command_reaches_the_tab_through_a_message() -> None:
    """The Elo tab's palette commands post ShowTab (the tab never calls the app): from the
    Profiles tab, "Elo: load the shipped example" brings the Elo tab up and loads it."""
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(EloTab)
        # the app shows its initial tab after its first refresh: let that happen first
        assert await until(lambda: app.query_one("#tabs").active == "profiles")
        await pilot.pause()
        await pilot.pause()
        command = next(c for c in tab.commands() if c.title == "Elo: load the shipped example")
        command.callback()
        assert await until(lambda: tab.data is not None)
        assert await until(lambda: tables_measured(app) and "best_of_8" in screen_text(app))
        assert app.query_one("#tabs").active == "elo"
        assert "best_of_8" in screen_text(app)
