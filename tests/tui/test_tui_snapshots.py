"""Snapshots of the main screens (deterministic data), at 80×24 and at 120×40.

Update after an intended change with: pytest tests/tui/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

import asyncio
import time
from importlib import resources
from pathlib import Path

import pytest
from textual.widgets import Sparkline

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.run_view import RunView
from eloledger.tui.sources import SnapshotSource
from eloledger.tui.testing import sample_counters, until

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
        deadline = time.monotonic() + 60
        while (view.ticks < 1 or not view._rates) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        for timer in list(view._timers):
            timer.pause()
        assert view.ticks >= 1 and view._rates, "the Run view never refreshed"
        while len(view._rates) > 1:  # a loaded machine may run the 1 Hz timer twice before
            view._rates.popleft()  # the pause: the capture shows one point either way
        view.query_one("#run-rate", Sparkline).data = list(view._rates)
        # the last tick's summary laid out in full: a capture once showed its first line only
        summary = view.query_one("#run-summary")
        summary.refresh(layout=True)
        lines = view._summary_text.count("\n") + 1
        while summary.size.height < lines and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await pilot.pause()

    assert snap_compare(run_app(), terminal_size=size, run_before=settled)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_elo_tab(snap_compare, size: tuple[int, int]) -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )

    async def loaded(pilot) -> None:
        deadline = time.monotonic() + 30
        while app.query_one(EloTab).data is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=loaded)


def test_snapshot_profiles_tab(snap_compare) -> None:
    async def loaded(pilot) -> None:
        await pilot.pause(0.5)

    assert snap_compare(EloLedgerApp(), terminal_size=(80, 24), run_before=loaded)


def test_snapshot_help(snap_compare) -> None:
    assert snap_compare(EloLedgerApp(), terminal_size=(80, 24), press=["f1", "_"])


def _elo_app() -> EloLedgerApp:
    return EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )


async def _elo_loaded(app: EloLedgerApp, pilot) -> None:
    deadline = time.monotonic() + 30
    while app.query_one(EloTab).data is None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await pilot.pause(0.3)


def test_snapshot_elo_plot_no_color(snap_compare, monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR: the Elo plot renders in monochrome instead of crashing."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = _elo_app()

    async def loaded(pilot) -> None:
        await _elo_loaded(app, pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_budget_curves(snap_compare, size: tuple[int, int]) -> None:
    app = _elo_app()

    async def curves(pilot) -> None:
        await _elo_loaded(app, pilot)
        await pilot.press("v")
        deadline = time.monotonic() + 60
        while app.query_one(EloTab).curves is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=curves)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_profile_form_typing(snap_compare, size: tuple[int, int]) -> None:
    """The text being typed is visible in the focused field."""

    async def typing(pilot) -> None:
        # wait for events, not wall-clock pauses a loaded machine may not honour: the form is
        # mounted and its name field focused; Tab has moved focus before the URL is typed
        app = pilot.app
        await pilot.pause(0.8)  # the app's first screen is up before its key is pressed
        await pilot.press("n")
        assert await until(lambda: getattr(app.focused, "id", None) == "form-name")
        await pilot.press(*"my-gw", "tab")
        assert await until(lambda: getattr(app.focused, "id", None) == "form-url")
        await pilot.press(*"https://gw.example.com/v1")
        url = app.screen.query_one("#form-url")
        assert await until(lambda: url.value == "https://gw.example.com/v1")
        await pilot.pause(0.3)  # the as-you-type URL check answers from the same value
        for field in app.screen.query("Input"):  # a blinking cursor made the picture a coin
            field.cursor_blink = False  # toss under load: keep it steadily shown
        await pilot.pause()

    assert snap_compare(EloLedgerApp(), terminal_size=size, run_before=typing)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_fairness_dialog(snap_compare, size: tuple[int, int]) -> None:
    """The dialog shows its rounds and seed; nothing guessed by order."""
    app = _elo_app()

    async def dialog(pilot) -> None:
        await _elo_loaded(app, pilot)
        await pilot.press("f")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=dialog)
