"""Snapshots of the main screens (deterministic data), at 80×24 and at 120×40.

Update after an intended change with: pytest tests/tui/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from textual.widgets import DataTable, Sparkline

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.budget_views import FairnessScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.run_view import RunView
from eloledger.tui.sources import SnapshotSource
from eloledger.tui.testing import (
    nothing_pending,
    run_summary_whole,
    sample_counters,
    screen_text,
    until,
)

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))
SIZES = [(80, 24), (120, 40)]


def run_app() -> EloLedgerApp:
    counters = sample_counters(rows=60)
    counters.in_flight = 5
    counters.on_tokens("best_of_2", 321)
    frozen = counters.started_at + 12.0  # a fixed clock: elapsed time and tok/s never move
    return EloLedgerApp(
        source=SnapshotSource(counters, label="demo.ledger.jsonl", state="running"),
        clock=lambda: frozen,
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_run_view(snap_compare, size: tuple[int, int]) -> None:
    async def settled(pilot) -> None:
        # Wait for the event (the first refresh and the 1 Hz sparkline's first point), not for a
        # wall-clock pause a loaded machine may not honour; then hold the view's timers so no
        # second point can arrive before the capture (the frozen clock holds everything else).
        view = pilot.app.query_one(RunView)
        refreshed = await until(lambda: view.ticks >= 1 and view._rates, 60)
        for timer in list(view._timers):
            timer.pause()
        assert refreshed, "the Run view never refreshed"
        while len(view._rates) > 1:  # a loaded machine may run the 1 Hz timer twice before
            view._rates.popleft()  # the pause: the capture shows one point either way
        view.query_one("#run-rate", Sparkline).data = list(view._rates)
        # the last tick's summary laid out in full: a capture once showed its first line only
        view.query_one("#run-summary").refresh(layout=True)
        assert await until(lambda: run_summary_whole(pilot.app), 60)
        await pilot.pause()

    assert snap_compare(run_app(), terminal_size=size, run_before=settled)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_elo_tab(snap_compare, size: tuple[int, int]) -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )

    async def loaded(pilot) -> None:
        await _elo_loaded(app)

    assert snap_compare(app, terminal_size=size, run_before=loaded)


def _profiles_loaded(app: EloLedgerApp) -> bool:
    """The Profiles tab has read the profiles and what each client uses, drawn both, and has
    the focus (its keys in the footer)."""
    tab = app.query_one(ProfilesTab)
    text = screen_text(app)
    return bool(tab.presets) and tab.has_focus_within and "← built-in default" in text


def test_snapshot_profiles_tab(snap_compare) -> None:
    async def loaded(pilot) -> None:
        assert await until(lambda: _profiles_loaded(pilot.app))

    assert snap_compare(EloLedgerApp(), terminal_size=(80, 24), run_before=loaded)


def test_snapshot_help(snap_compare) -> None:
    async def help_shown(pilot) -> None:
        assert await until(lambda: _profiles_loaded(pilot.app))  # drawn behind the help
        await pilot.press("f1")
        assert await until(lambda: "run history and its cost-drift audit" in screen_text(pilot.app))

    assert snap_compare(EloLedgerApp(), terminal_size=(80, 24), run_before=help_shown)


def _elo_app() -> EloLedgerApp:
    return EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )


async def _elo_loaded(app: EloLedgerApp) -> None:
    """The Elo tab has fitted the example and, redrawn at its size, shows its table whole (every
    cell), its plot's legend, and its keys in the footer (they show once the table has the
    focus)."""
    tab = app.query_one(EloTab)
    assert await until(lambda: tab.data is not None)

    def drawn() -> bool:
        if not table_whole(app):
            return False
        text = screen_text(app)
        return "x: tokens per task" in text and "Fairness" in text.splitlines()[-1]

    assert await until(drawn), screen_text(app)


def table_whole(app: EloLedgerApp) -> bool:
    """Every cell of the Elo table is on screen whole, once no redraw of the tab (each refills
    the table) is pending and the table has measured its rows."""
    if not nothing_pending(app):
        return False
    table = app.query_one(EloTab).query_one(DataTable)
    text = screen_text(app)
    rows = (table.get_row_at(row) for row in range(table.row_count))
    return all(str(cell) in text for row in rows for cell in row)


def test_snapshot_elo_plot_no_color(snap_compare, monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR: the Elo plot renders in monochrome instead of crashing."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = _elo_app()

    async def loaded(pilot) -> None:
        await _elo_loaded(app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_budget_curves(snap_compare, size: tuple[int, int]) -> None:
    app = _elo_app()

    async def curves(pilot) -> None:
        await _elo_loaded(app)
        await pilot.press("v")
        assert await until(lambda: app.query_one(EloTab).curves is not None, 60)

        def drawn() -> bool:  # the curves' status line and legend, the table refilled for them
            if not table_whole(app):
                return False
            text = screen_text(app)
            return "v: back" in text and "(r: next)" in text

        assert await until(drawn), screen_text(app)

    assert snap_compare(app, terminal_size=size, run_before=curves)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_profile_form_typing(snap_compare, size: tuple[int, int]) -> None:
    """The text being typed is visible in the focused field."""

    async def typing(pilot) -> None:
        # wait for events, not wall-clock pauses a loaded machine may not honour: the form is
        # mounted and its name field focused; Tab has moved focus before the URL is typed
        app = pilot.app
        # the app's first screen is up (profiles read and drawn) before its key is pressed
        assert await until(lambda: _profiles_loaded(app))
        await pilot.press("n")
        assert await until(lambda: getattr(app.focused, "id", None) == "form-name")
        await pilot.press(*"my-gw", "tab")
        assert await until(lambda: getattr(app.focused, "id", None) == "form-url")
        await pilot.press(*"https://gw.example.com/v1")
        url = app.screen.query_one("#form-url")
        assert await until(lambda: url.value == "https://gw.example.com/v1")
        # the as-you-type URL check answers from the same value
        assert await until(lambda: "URL looks right" in screen_text(app))
        for field in app.screen.query("Input"):  # a blinking cursor made the picture a coin
            field.cursor_blink = False  # toss under load: keep it steadily shown
        await pilot.pause()

    assert snap_compare(EloLedgerApp(), terminal_size=size, run_before=typing)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_fairness_dialog(snap_compare, size: tuple[int, int]) -> None:
    """The dialog shows its rounds and seed; nothing guessed by order."""
    app = _elo_app()

    async def dialog(pilot) -> None:
        await _elo_loaded(app)
        await pilot.press("f")

        def shown() -> bool:  # drawn, with the focus on its first list
            on_first = getattr(app.focused, "id", None) == "fair-old_1"
            return on_first and "Judge (enter)" in screen_text(app)

        assert await until(shown), screen_text(app)
        assert isinstance(app.screen, FairnessScreen)

    assert snap_compare(app, terminal_size=size, run_before=dialog)
