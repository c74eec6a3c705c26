"""Text typed right after Tab in the profile form lands in the next field.

A terminal delivers a burst of keys (fast typing, or a paste-like burst) before the app has
handled the first. Pilot's ``press`` waits for each key to be handled, which hides the bug, so
the burst is posted to the app at once, as the driver does.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.profile_form import ProfileForm
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.testing import until


def _focused_id(app: EloLedgerApp) -> str | None:
    return app.screen.focused.id if app.screen.focused is not None else None


def _burst(app: EloLedgerApp, keys: list[str]) -> None:
    """Post keys without waiting in between, like a terminal driver reading a burst."""
    for key in keys:
        char = key if len(key) == 1 else None
        app.post_message(events.Key(key, char))


async def test_text_typed_right_after_tab_lands_in_the_next_field() -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(ProfilesTab).presets)
        app.query_one(ProfilesTab).action_new()  # what "n" does; the keys under test follow
        assert await until(lambda: _focused_id(app) == "form-name")
        form = app.screen
        assert isinstance(form, ProfileForm)
        name, url = form.query_one("#form-name", Input), form.query_one("#form-url", Input)
        _burst(app, [*"gw", "tab", *"http://x", "shift+tab", *"2"])
        assert await until(lambda: len(name.value) + len(url.value) >= 11)
        await pilot.pause()
        assert (name.value, url.value) == ("gw2", "http://x")
        assert form.focused is name
