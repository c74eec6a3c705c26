"""The profile form: typed text is visible; editing keeps the stored URL."""

from __future__ import annotations

import asyncio

from textual.widgets import Input

from eloledger.profiles.model import Profile
from eloledger.profiles.store import load_profiles, save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.profiles_tab import ProfileForm, ProfilesTab
from eloledger.tui.testing import screen_text


async def _wait(predicate, pilot, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            break
        await asyncio.sleep(0.05)
    await pilot.pause(0.2)


async def _new_form(app: EloLedgerApp, pilot) -> None:
    """Open the "new profile" form once the Profiles tab has loaded."""
    await _wait(lambda: app.query_one(ProfilesTab).presets, pilot)
    await pilot.press("n")
    await pilot.pause()
    assert isinstance(app.screen, ProfileForm)


async def test_focused_input_shows_the_text_being_typed_at_80x24() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await _new_form(app, pilot)
        await pilot.press(*"my-gw")
        await pilot.press("tab", *"https://gw.example.com")
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "my-gw" in text
        assert "https://gw.example.com" in text
        assert app.screen.focused is app.screen.query_one("#form-url", Input)


async def test_edit_places_the_cursor_at_the_end_and_keeps_the_url() -> None:
    save_profile(Profile(name="mine", base_url="https://gw.example.com", key_env="MINE_KEY"))
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await _wait(lambda: "mine" in app.query_one(ProfilesTab).profiles, pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ProfileForm)
        await pilot.press(*"/api")
        await pilot.pause(0.2)
        url = app.screen.query_one("#form-url", Input)
        assert url.value == "https://gw.example.com/api"
        assert "https://gw.example.com/api" in screen_text(app)
        await pilot.press("ctrl+s")
        await _wait(lambda: load_profiles()["mine"].base_url.endswith("/api"), pilot)
        assert load_profiles()["mine"].base_url == "https://gw.example.com/api"


async def test_typing_a_pasted_endpoint_as_root_shows_the_error_and_the_root() -> None:
    """`.../v1/chat` is no root: the form must not say "URL looks right" (it did)."""
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await _new_form(app, pilot)
        await pilot.press(*"my-gw", "tab", *"https://gw.example.com/v1/chat")
        await pilot.pause(0.3)
        check = str(app.screen.query_one("#form-url-check").render())
        assert "looks right" not in check
        assert "error:" in check and "use https://gw.example.com" in check, check
        await pilot.press(*["backspace"] * len("/v1/chat"))  # back to the root
        await pilot.pause(0.3)
        assert "looks right" in str(app.screen.query_one("#form-url-check").render())
