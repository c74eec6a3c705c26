"""NO_COLOR: the Elo plot and the demo's end must not crash the app."""

from __future__ import annotations

import asyncio
import time

import pytest

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text


async def _wait_for_elo(app: EloLedgerApp, pilot) -> None:
    deadline = time.monotonic() + 30
    while app.query_one(EloTab).data is None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await pilot.pause(0.3)


async def test_no_color_elo_plot_renders_without_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """`NO_COLOR=1 eloledger`, `4`, `e`: the plot's blank strips carry no style at all."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)  # the first refresh places focus; then the keys reach the tabs
        await pilot.press("4")
        await pilot.pause(0.3)
        await pilot.press("e")
        await _wait_for_elo(app, pilot)
        await pilot.resize_terminal(120, 40)  # a relayout repaints the canvas at a new size
        await pilot.pause(0.3)
        text = screen_text(app)
        assert app.is_running
        assert "tokens per task" in text
        for strip in app.screen._compositor.render_strips():
            for seg in strip:
                colour = seg.style.color if seg.style else None
                if colour is not None and colour.triplet is not None:
                    assert colour.triplet.red == colour.triplet.green == colour.triplet.blue
    assert app._exception is None
