"""The Profiles list marks the active profile (TUI part)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import DiffScreen
from eloledger.tui.profile_switch import SwitchScreen
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.testing import nothing_pending, screen_text, until


def list_drawn(app: EloLedgerApp, tab: ProfilesTab) -> bool:
    """The profiles are loaded, their list drawn (the presets after the profiles) and the
    focus placed in the tab (after the first refresh: it would move a focus given before)."""
    return "gw" in tab.profiles and tab.has_focus_within and "(preset)" in screen_text(app)


async def show_switch_diff(app: EloLedgerApp, pilot) -> None:
    """Select the first profile, "u", enter: its switch diff."""
    option_list = app.query_one("#profile-list", OptionList)
    option_list.focus()
    option_list.highlighted = 0
    await pilot.press("u")
    # the switch dialog, the focus in it (enter goes there)
    assert await until(lambda: isinstance(app.screen, SwitchScreen) and app.screen.focused)
    await pilot.press("enter")
    assert await until(lambda: isinstance(app.screen, DiffScreen))


async def test_switching_marks_the_profile_active_in_the_list(temp_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GW_KEY", "sk-gw-active-0123456789")
    save_profile(
        Profile(
            name="gw", base_url="https://gw.example.com", key_env="GW_KEY", clients=["claude-code"]
        )
    )
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(ProfilesTab)
        assert await until(lambda: list_drawn(app, tab)), screen_text(app)
        assert "● gw" not in screen_text(app)
        await show_switch_diff(app, pilot)
        await pilot.press("a")
        assert await until(lambda: "gw" in tab.active)
        # the list and the detail reloaded after the switch, drawn
        assert await until(
            lambda: "● gw" in screen_text(app) and "active for:" in screen_text(app)
        ), screen_text(app)
        text = screen_text(app)
        assert "● gw" in text and "active for: claude-code" in text


async def test_switch_diff_shows_without_the_key_and_cannot_be_applied(temp_home: Path) -> None:
    """The URLs and settings are shown; the key is a placeholder."""
    save_profile(
        Profile(
            name="gw", base_url="https://gw.example.com", key_env="GW_KEY", clients=["claude-code"]
        )
    )
    claude = temp_home / ".claude" / "settings.json"
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(ProfilesTab)
        assert await until(lambda: list_drawn(app, tab)), screen_text(app)
        await show_switch_diff(app, pilot)
        assert await until(lambda: "preview only:" in screen_text(app)), screen_text(app)
        text = " ".join(screen_text(app).split())
        assert "preview only: $GW_KEY is not set" in text
        assert "ANTHROPIC_BASE_URL" in text and "https://gw.example.com" in text
        await pilot.press("a")  # nothing to apply without a key
        # the answer taken: the dialog closed, its callback run, and any switch it started
        # (a worker) done
        assert await until(lambda: not isinstance(app.screen, DiffScreen) and nothing_pending(app))
        assert await until(
            lambda: all(w.is_finished for w in app.workers if w.group == "profiles-switch")
        )
        assert not claude.exists()
