"""The app shell: four tabs by keyboard, help, command palette, themes as data, NO_COLOR."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList
from textual.widgets import TabbedContent

from eloledger.errors import UserError
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import HelpScreen
from eloledger.tui.testing import screen_text, until
from eloledger.tui.themes import load_theme_file, load_themes, shipped_theme_dir


async def test_four_tabs_by_keyboard_at_80x24() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        first = text.splitlines()[0]
        for name in ("Profiles", "Run", "Doctor", "Elo"):
            assert name in first
        tabs = app.query_one("#tabs", TabbedContent)
        for key, tab in (("2", "run"), ("3", "doctor"), ("4", "elo"), ("1", "profiles")):
            await pilot.press("escape", key)  # escape leaves any input so the digit is a key
            await pilot.pause()
            assert tabs.active == tab
        await pilot.press("2")
        assert await until(lambda: "No run yet" in screen_text(app)), screen_text(app)


async def test_help_screen_opens_with_f1_and_closes_with_escape() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        assert await until(lambda: isinstance(app.screen, HelpScreen))
        assert await until(lambda: "command palette" in screen_text(app)), screen_text(app)
        await pilot.press("escape")
        assert await until(lambda: not isinstance(app.screen, HelpScreen))


async def test_command_palette_lists_main_actions_and_runs_one() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Go to Elo tab", "Run the demo", "Cancel the run", "Help", "Next theme"):
            assert wanted in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to doctor")
        results = app.screen.query_one(CommandList)

        def doctor_highlighted() -> bool:  # what enter runs
            at = results.highlighted
            if at is None or at >= results.option_count:
                return False
            return "Go to Doctor tab" in str(results.get_option_at_index(at).prompt)

        assert await until(doctor_highlighted)
        await pilot.press("enter")  # the palette closes, then runs the command
        assert await until(lambda: app.query_one("#tabs", TabbedContent).active == "doctor")


async def test_shipped_themes_load_and_cycle() -> None:
    names = {t.name for t in load_themes()}
    assert {"eloledger-dark", "eloledger-light", "eloledger-high-contrast"} <= names
    assert shipped_theme_dir().is_dir()
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "eloledger-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "eloledger-high-contrast"  # files load in name order
        await pilot.press("ctrl+t")
        assert app.theme == "eloledger-light"
    again = EloLedgerApp()  # the pick is remembered for the next start
    async with again.run_test(size=(80, 24)):
        assert again.theme == "eloledger-light"


async def test_user_theme_folder_is_loaded_and_broken_files_are_reported(tmp_path: Path) -> None:
    folder = tmp_path / "themes"
    folder.mkdir()
    (folder / "mine.toml").write_text('name = "mine"\nprimary = "#112233"\ndark = true\n')
    (folder / "broken.toml").write_text('name = "broken"\nprimary = "not-a-colour"\n')
    warnings: list[str] = []
    themes = {t.name: t for t in load_themes(user_dir=folder, warn=warnings.append)}
    assert "mine" in themes and "broken" not in themes
    assert any("broken.toml" in w and "primary" in w for w in warnings)
    app = EloLedgerApp(user_theme_dir=folder, theme="mine")
    async with app.run_test(size=(80, 24)):
        assert app.theme == "mine"


def test_theme_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.toml"
    bad.write_text('name = "x"\nprimary = "#fff"\ncolour = "#000"\n')
    with pytest.raises(UserError, match=r"x\.toml.*unknown theme field.*colour"):
        load_theme_file(bad)
    bad.write_text("name = \n")
    with pytest.raises(UserError, match="not valid TOML"):
        load_theme_file(bad)


async def test_no_color_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.no_color
        colours = set()
        for strip in app.screen._compositor.render_strips():
            for seg in strip:
                if seg.style and seg.style.color and seg.style.color.triplet:
                    colours.add(seg.style.color.triplet)
        # Textual's monochrome filter leaves only greys (r == g == b).
        assert colours and all(c.red == c.green == c.blue for c in colours)
