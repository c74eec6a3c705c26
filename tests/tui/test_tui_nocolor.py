"""NO_COLOR: the Elo plot and the demo's end must not crash the app."""

from __future__ import annotations

import pytest

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.testing import screen_text, until


async def test_no_color_elo_plot_renders_without_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """`NO_COLOR=1 eloledger`, `4`, `e`: the plot's blank strips carry no style at all."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        # the first refresh places focus; then the keys reach the tabs
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)
        await pilot.press("4")
        elo = app.query_one(EloTab)
        assert await until(lambda: elo.has_focus_within)
        await pilot.press("e")
        assert await until(lambda: elo.data is not None)
        await pilot.resize_terminal(120, 40)  # a relayout repaints the canvas at a new size

        def relaid_out() -> bool:  # 40 rows now, the plot (its x label) among them
            lines = screen_text(app).splitlines()
            return len(lines) == 40 and any("tokens per task" in line for line in lines)

        assert await until(relaid_out)
        text = screen_text(app)
        assert app.is_running
        assert "tokens per task" in text
        for strip in app.screen._compositor.render_strips():
            for seg in strip:
                colour = seg.style.color if seg.style else None
                if colour is not None and colour.triplet is not None:
                    assert colour.triplet.red == colour.triplet.green == colour.triplet.blue
    assert app._exception is None
