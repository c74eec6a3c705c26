"""NO_COLOR keeps what colour used to say: the focused control is in reverse video (greys alone
left it one shade apart), a checkbox reads ticked (X) or not (blank) as text, and the fairness
dialog refuses one arm in two roles."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, Select

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.budget_views import FairnessScreen
from eloledger.tui.profiles_tab import ProfilesTab, SwitchScreen
from eloledger.tui.testing import screen_text, until

SIZES = [(80, 24), (120, 40)]


def reversed_text(app: EloLedgerApp) -> str:
    """Every character drawn in reverse video, in screen order."""
    return "".join(
        seg.text
        for strip in app.screen._compositor.render_strips()
        for seg in strip
        if seg.style is not None and seg.style.reverse and seg.text.strip()
    )


def reversed_on_rows_of(app: EloLedgerApp, widget) -> str:
    """The characters drawn in reverse video on ``widget``'s rows of the screen."""
    region = widget.region
    return "".join(
        seg.text
        for strip in app.screen._compositor.render_strips()[region.y : region.bottom]
        for seg in strip
        if seg.style is not None and seg.style.reverse and seg.text.strip()
    )


def focused_id(app: EloLedgerApp) -> str | None:
    return getattr(app.focused, "id", None)


def line_with(app: EloLedgerApp, needle: str) -> str:
    """The first screen line with ``needle`` after a checkbox (▐), e.g. "▐X▌ Codex CLI"; ""
    while there is none."""
    for strip in app.screen._compositor.render_strips():
        text = "".join(seg.text for seg in strip)
        if "▐" in text and needle in text.split("▐", 1)[1]:
            return text
    return ""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_color_focus_is_reverse_video_and_follows_tab(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # app is up
        app.push_screen(FairnessScreen(["base_n1", "cot_n1", "base_n4", "cot_n4"]))
        assert await until(lambda: focused_id(app) == "fair-old_1"), focused_id(app)
        assert await until(lambda: "choose an arm" in reversed_text(app)), reversed_text(app)
        await pilot.press("tab")
        assert await until(lambda: focused_id(app) == "fair-new_1"), focused_id(app)
        new_1 = app.focused  # drawn in reverse video now, which the old one no longer is
        assert await until(lambda: "choose an arm" in reversed_on_rows_of(app, new_1))
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
        assert await until(lambda: tab.has_focus_within and tab.selected() is not None)
        await pilot.press("u")
        assert await until(lambda: isinstance(app.screen, SwitchScreen))
        assert await until(lambda: isinstance(app.focused, Checkbox))
        box = app.focused
        label = str(box.label)
        assert box.value
        assert await until(lambda: "▐X▌" in line_with(app, label)), screen_text(app)  # ticked: an X
        if no_color:  # the focused box's label in reverse video
            assert await until(lambda: label in reversed_text(app)), reversed_text(app)
        await pilot.press("space")
        assert not box.value
        # not ticked: blank
        assert await until(lambda: "▐ ▌" in line_with(app, label)), screen_text(app)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_fairness_dialog_refuses_one_arm_in_two_roles(size: tuple[int, int]) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).has_focus_within)  # app is up
        results: list = []
        app.push_screen(FairnessScreen(["base_n1", "cot_n1", "base_n4", "cot_n4"]), results.append)
        assert await until(lambda: focused_id(app) == "fair-old_1")  # mounted, on its first list
        screen = app.screen

        def error() -> str:
            return str(screen.query_one("#fair-error").render())

        picks = {"old_1": "base_n1", "new_1": "cot_n1", "old_n": "base_n1", "new_n": "cot_n4"}
        for role, arm in picks.items():
            screen.query_one(f"#fair-{role}", Select).value = arm
        # said at the pick, before Judge
        assert await until(lambda: "base_n1 is chosen twice" in error()), error()
        screen.action_submit()
        await pilot.pause()  # a dismissal, had there been one, would have run by now
        assert app.screen is screen and results == []  # not judged
        screen.query_one("#fair-old_n", Select).value = "base_n4"
        assert await until(lambda: error() == ""), error()
        screen.action_submit()
        assert await until(lambda: results != [])
        assert results == [{"old_1": "base_n1", "new_1": "cot_n1", "old_n": "base_n4",
                            "new_n": "cot_n4"}]  # fmt: skip
