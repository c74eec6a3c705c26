"""In the fairness dialog, enter on an arm's list opens it (it does not judge a
half-filled form and show "choose an arm for..."), a pick moves on to the next arm, and an error
on screen clears once all four arms are chosen. Keys only, at 80x24 and 120x40."""

from __future__ import annotations

import pytest
from test_tui_fairness import run_files  # noqa: F401  (the four-arm ledger fixture)
from textual.widgets import Button, Select

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.budget_views import FairnessScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, until

PICKS = {"old_1": "alpha", "new_1": "bravo", "old_n": "charlie", "new_n": "delta"}


async def open_dialog(app: EloLedgerApp, pilot) -> EloTab:
    tab = app.query_one(EloTab)
    assert await until(lambda: tab.data is not None and tab.has_focus_within)
    await pilot.press("f")
    assert await until(lambda: isinstance(app.screen, FairnessScreen))
    first = app.screen.query_one("#fair-old_1", Select)
    assert await until(lambda: app.screen.focused is first)  # the first arm to choose
    return tab


async def pick(app: EloLedgerApp, pilot, role: str, arm: str) -> None:
    """Enter opens the focused list; down to the arm; enter picks it."""
    select = app.screen.query_one(f"#fair-{role}", Select)
    assert app.screen.focused is select, f"focus is on {app.screen.focused}, not {role}"
    error_before = "choose an arm for" in screen_text(app)
    await pilot.press("enter")
    assert await until(lambda: select.expanded), f"enter did not open the {role} list"
    assert ("choose an arm for" in screen_text(app)) == error_before  # enter did not judge
    for _ in range(app.screen.arms.index(arm) + 1):  # the prompt line comes first
        await pilot.press("down")
    await pilot.press("enter")
    assert await until(lambda: not select.expanded and select.value == arm), (role, select.value)
    assert await until(lambda: app.screen.focused is not select)  # on to the next one
    assert await until(lambda: error_drawn(app)), screen_text(app)


def error_drawn(app: EloLedgerApp) -> bool:
    """The dialog's error line as drawn says what the dialog found at the last pick (a line
    that changed is drawn, and laid out to its new height, a frame later)."""
    error = app.screen.query_one("#fair-error")
    region = error.region
    rows = screen_text(app).splitlines()[region.y : region.bottom]
    drawn = " ".join(row[region.x : region.right] for row in rows)
    return drawn.split() == app.screen._error.split()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_enter_opens_each_list_and_judges_from_the_button(run_files, size) -> None:  # noqa: F811
    comparisons, ledger = run_files
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comparisons, ledger))
    async with app.run_test(size=size) as pilot:
        tab = await open_dialog(app, pilot)
        for role, arm in PICKS.items():
            await pick(app, pilot, role, arm)
            assert isinstance(app.screen, FairnessScreen) and tab.verdict is None
        assert isinstance(app.screen.focused, Button)  # all four chosen: on to Judge
        await pilot.press("enter")
        assert await until(lambda: tab.verdict is not None)
        assert tab.verdict["inputs"]["new_n"] == "delta"


async def test_error_clears_once_all_four_are_chosen(run_files) -> None:  # noqa: F811
    comparisons, ledger = run_files
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comparisons, ledger))
    async with app.run_test(size=(80, 24)) as pilot:
        tab = await open_dialog(app, pilot)
        await pilot.press("tab", "tab", "tab", "tab")  # past the four lists to Judge
        assert isinstance(app.screen.focused, Button)
        await pilot.press("enter")
        assert await until(lambda: "choose an arm for" in screen_text(app))
        assert "choose an arm for" in screen_text(app) and tab.verdict is None
        await pilot.press("shift+tab", "shift+tab", "shift+tab", "shift+tab")
        for role, arm in PICKS.items():
            await pick(app, pilot, role, arm)
            if role != "new_n":  # still names what is missing, and only that
                assert "choose an arm for" in screen_text(app)
                assert FairnessScreen.LABELS[role] not in screen_text(app).split("choose")[-1]
        text = screen_text(app)
        assert "choose an arm for" not in text, text
        assert isinstance(app.screen, FairnessScreen) and tab.verdict is None
