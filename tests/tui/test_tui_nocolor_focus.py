"""NO_COLOR keeps what colour used to say: the focused control is in reverse video (greys alone
left it one shade apart), a checkbox reads ticked (X) or not (blank) as text, and the fairness
dialog refuses one arm in two roles."""

from __future__ import annotations

import pytest
from textual.widgets import Select

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.budget_views import FairnessScreen
from eloledger.tui.profiles_tab import ProfilesTab, SwitchScreen
from eloledger.tui.testing import until

SIZES = [(80, 24), (120, 40)]


def reversed_text(app: EloLedgerApp) -> str:
    """Every character drawn in reverse video, in screen order."""
    return "".join(
        seg.text
        for strip in app.screen._compositor.render_strips()
        for seg in strip
        if seg.style is not None and seg.style.reverse and seg.text.strip()
    )


def line_with(app: EloLedgerApp, needle: str) -> str:
    """The first screen line with ``needle`` after a checkbox (▐), e.g. "▐X▌ Codex CLI"."""
    for strip in app.screen._compositor.render_strips():
        text = "".join(seg.text for seg in strip)
        if "▐" in text and needle in text.split("▐", 1)[1]:
            return text
    raise AssertionError(f"{needle!r} not on screen")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_color_focus_is_reverse_video_and_follows_tab(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        app.push_screen(FairnessScreen(["base_n1", "cot_n1", "base_n4", "cot_n4"]))
        await pilot.pause(0.3)
        assert app.focused.id == "fair-old_1"
        assert "choose an arm" in reversed_text(app)
        await pilot.press("tab")
        await pilot.pause(0.2)
        assert app.focused.id == "fair-new_1"
        assert reversed_text(app).count("choose an arm") == 1  # only the focused one


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("no_color", [False, True], ids=["color", "NO_COLOR"])
async def test_checkbox_state_reads_as_text(
    size: tuple[int, int], no_color: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("GW_KEY", "sk-gw-nocolor-0123456789")
    save_profile(Profile(name="gw", base_url="https://gw.example.com", key_env="GW_KEY"))
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        tab = app.query_one(ProfilesTab)
        assert await until(lambda: "gw" in tab.profiles)
        await pilot.pause(0.3)
        await pilot.press("u")
        assert await until(lambda: isinstance(app.screen, SwitchScreen))
        await pilot.pause(0.3)
        box = app.focused
        label = str(box.label)
        assert box.value and "▐X▌" in line_with(app, label)  # ticked: an X
        if no_color:
            assert label in reversed_text(app)  # the focused box's label in reverse video
        await pilot.press("space")
        await pilot.pause(0.2)
        assert not box.value and "▐ ▌" in line_with(app, label)  # not ticked: blank


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_fairness_dialog_refuses_one_arm_in_two_roles(size: tuple[int, int]) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        results: list = []
        app.push_screen(FairnessScreen(["base_n1", "cot_n1", "base_n4", "cot_n4"]), results.append)
        await pilot.pause(0.3)
        screen = app.screen
        picks = {"old_1": "base_n1", "new_1": "cot_n1", "old_n": "base_n1", "new_n": "cot_n4"}
        for role, arm in picks.items():
            screen.query_one(f"#fair-{role}", Select).value = arm
        await pilot.pause(0.2)
        error = str(screen.query_one("#fair-error").render())
        assert "base_n1 is chosen twice" in error  # said at the pick, before Judge
        screen.action_submit()
        await pilot.pause(0.2)
        assert app.screen is screen and results == []  # not judged
        screen.query_one("#fair-old_n", Select).value = "base_n4"
        await pilot.pause(0.2)
        assert str(screen.query_one("#fair-error").render()) == ""
        screen.action_submit()
        await pilot.pause(0.2)
        assert results == [{"old_1": "base_n1", "new_1": "cot_n1", "old_n": "base_n4",
                            "new_n": "cot_n4"}]  # fmt: skip
