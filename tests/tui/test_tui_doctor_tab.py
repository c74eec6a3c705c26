"""The Doctor tab and the tabs' messages up to the app.

With nothing configured, the Doctor tab says so and offers "n" to add a profile (it used to
say "nothing wrong found"); "n" there opens the Profiles tab's form through a ShowTab message;
a palette command of a tab shows the tab and runs its action (it used to drop the action).
"""

from __future__ import annotations

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.doctor_tab import DoctorTab
from eloledger.tui.profile_form import ProfileForm
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.testing import screen_text, until


def _status(app: EloLedgerApp) -> str:
    return str(app.query_one("#doctor-status").render())


async def test_empty_doctor_tab_says_add_a_profile_and_n_opens_the_form() -> None:
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(80, 24)) as pilot:
        doctor = app.query_one(DoctorTab)
        assert await until(lambda: bool(doctor.last_run))
        assert await until(lambda: "add a profile (n)" in " ".join(screen_text(app).split()))
        text = " ".join(screen_text(app).split())
        assert "nothing wrong found" not in text
        assert "Nothing configured yet" in text and "add a profile (n)" in text
        # the check can end before the first refresh places the focus in the tab (its keys)
        assert await until(lambda: doctor.has_focus_within)
        await pilot.press("n")
        assert await until(lambda: isinstance(app.screen, ProfileForm))
        assert app.query_one("#tabs").active == "profiles"


async def test_doctor_tab_with_a_profile_is_not_called_empty() -> None:
    save_profile(Profile("gw", "https://gw.example.com", key_env="GW_KEY"))  # GW_KEY unset: 1 error
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(80, 24)) as pilot:
        doctor = app.query_one(DoctorTab)
        assert await until(lambda: bool(doctor.last_run))
        await pilot.pause()
        assert "Nothing configured yet" not in _status(app)
        assert _status(app).startswith("1 error · 0 warnings · 0 info — offline checks")  # item 8


async def test_a_palette_command_shows_its_tab_and_runs_its_action() -> None:
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(
            lambda: app.query_one(ProfilesTab).presets and app.query_one(DoctorTab).last_run
        )
        await pilot.pause()
        command = next(
            c for c in app.query_one(ProfilesTab).commands() if c.title == "Profiles: new profile"
        )
        command.callback()
        assert await until(lambda: isinstance(app.screen, ProfileForm))
        await pilot.pause()
        assert app.query_one("#tabs").active == "profiles"
