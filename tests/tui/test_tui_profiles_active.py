"""The Profiles list marks the active profile (TUI part)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import DiffScreen
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.testing import screen_text, until


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
        assert await until(lambda: "gw" in tab.profiles)
        await pilot.pause(0.3)
        assert "● gw" not in screen_text(app)
        option_list = app.query_one("#profile-list", OptionList)
        option_list.focus()
        option_list.highlighted = 0
        await pilot.press("u")
        await pilot.pause(0.3)
        await pilot.press("enter")
        assert await until(lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("a")
        assert await until(lambda: "gw" in tab.active)
        await pilot.pause(0.5)
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
        assert await until(lambda: "gw" in tab.profiles)
        await pilot.pause(0.3)
        option_list = app.query_one("#profile-list", OptionList)
        option_list.focus()
        option_list.highlighted = 0
        await pilot.press("u")
        await pilot.pause(0.3)
        await pilot.press("enter")
        assert await until(lambda: isinstance(app.screen, DiffScreen))
        await pilot.pause(0.3)
        text = " ".join(screen_text(app).split())
        assert "preview only: $GW_KEY is not set" in text
        assert "ANTHROPIC_BASE_URL" in text and "https://gw.example.com" in text
        await pilot.press("a")  # nothing to apply without a key
        await pilot.pause(0.5)
        assert not claude.exists()
