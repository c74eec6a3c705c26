"""The profile form: typed text is visible; editing keeps the stored URL."""

from __future__ import annotations

from textual.widgets import Input

from eloledger.profiles.model import Profile
from eloledger.profiles.store import load_profiles, save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.profiles_tab import ProfileForm, ProfilesTab
from eloledger.tui.testing import screen_text, until


def _focused_id(app: EloLedgerApp) -> str | None:
    return getattr(app.focused, "id", None)


async def _new_form(app: EloLedgerApp, pilot) -> None:
    """Open the "new profile" form once the Profiles tab has loaded; its name field has focus."""
    tab = app.query_one(ProfilesTab)
    assert await until(lambda: tab.presets and tab.has_focus_within)
    await pilot.press("n")
    assert await until(lambda: _focused_id(app) == "form-name")
    assert isinstance(app.screen, ProfileForm)


async def test_focused_input_shows_the_text_being_typed_at_80x24() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await _new_form(app, pilot)
        await pilot.press(*"my-gw")
        await pilot.press("tab", *"https://gw.example.com")
        assert await until(lambda: "https://gw.example.com" in screen_text(app))
        text = screen_text(app)
        assert "my-gw" in text
        assert "https://gw.example.com" in text
        assert app.screen.focused is app.screen.query_one("#form-url", Input)


async def test_edit_places_the_cursor_at_the_end_and_keeps_the_url() -> None:
    save_profile(Profile(name="mine", base_url="https://gw.example.com", key_env="MINE_KEY"))
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(ProfilesTab)
        assert await until(lambda: tab.selected_name() == "mine" and tab.has_focus_within)
        await pilot.press("e")
        assert await until(lambda: _focused_id(app) == "form-url")  # the cursor at its end
        assert isinstance(app.screen, ProfileForm)
        await pilot.press(*"/api")
        url = app.screen.query_one("#form-url", Input)
        assert await until(lambda: url.value == "https://gw.example.com/api"), url.value
        assert await until(lambda: "https://gw.example.com/api" in screen_text(app))
        await pilot.press("ctrl+s")
        assert await until(lambda: load_profiles()["mine"].base_url.endswith("/api"))
        assert load_profiles()["mine"].base_url == "https://gw.example.com/api"


async def test_typing_a_pasted_endpoint_as_root_shows_the_error_and_the_root() -> None:
    """`.../v1/chat` is no root: the form must not say "URL looks right" (it did)."""
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await _new_form(app, pilot)
        await pilot.press(*"my-gw", "tab", *"https://gw.example.com/v1/chat")
        form = app.screen
        url = form.query_one("#form-url", Input)

        def check() -> str:  # what the form says of the URL as typed
            return str(form.query_one("#form-url-check").render())

        assert await until(lambda: url.value.endswith("/v1/chat") and "error:" in check()), check()
        assert "looks right" not in check()
        assert "error:" in check() and "use https://gw.example.com" in check(), check()
        await pilot.press(*["backspace"] * len("/v1/chat"))  # back to the root
        assert await until(lambda: "looks right" in check()), check()
