"""80×24 is the normal case: every footer hint, prompt and dialog fits."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import DiffScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.profiles_tab import ProfilesTab, SwitchScreen
from eloledger.tui.testing import screen_text, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def footer_line(app: EloLedgerApp) -> str:
    return screen_text(app).splitlines()[-1]


def shown_hints(app: EloLedgerApp) -> list[str]:
    """The description of every binding the footer should show right now."""
    hints = []
    for _, binding, enabled, _ in app.active_bindings.values():
        if binding.show and enabled and binding.description:
            hints.append(binding.description)
    return hints


async def test_every_footer_hint_fits_at_80_columns() -> None:
    app = EloLedgerApp(elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(EloTab).data is not None)
        await pilot.pause(0.3)
        for key in ("1", "2", "3", "4"):
            await pilot.press("escape", key)
            await pilot.pause(0.3)
            line = footer_line(app)
            hints = shown_hints(app)
            assert len(hints) >= 3, (key, hints)
            for hint in hints:
                assert hint in line, (key, hint, line)


async def test_switch_dialog_fits_and_enter_shows_the_diff(monkeypatch) -> None:
    monkeypatch.setenv("GW_KEY", "sk-gw-fit-0123456789")
    save_profile(Profile(name="gw", base_url="https://gw.example.com", key_env="GW_KEY"))
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(ProfilesTab)
        assert await until(lambda: "gw" in tab.profiles)
        await pilot.pause(0.3)
        await pilot.press("u")
        await pilot.pause(0.3)
        assert isinstance(app.screen, SwitchScreen)
        text = screen_text(app)
        for wanted in ("which clients?", "Claude Code", "Shell", "scope", "Show the diff (enter)"):
            assert wanted in text, wanted
        await pilot.press("enter")  # focus is on a checkbox: enter still submits
        assert await until(lambda: isinstance(app.screen, DiffScreen))


async def test_threshold_prompt_and_backups_header_are_not_cut() -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(EloTab).data is not None)
        await pilot.pause(0.3)
        await pilot.press("t")
        await pilot.pause(0.3)
        flat = " ".join(line.strip("█ ") for line in screen_text(app).splitlines())
        assert "per task (marginal)? enter sets it · escape back" in flat
        await pilot.press("escape", "1")
        await pilot.pause(0.3)
        await pilot.press("b")
        await pilot.pause(0.5)
        flat = " ".join(line.strip("█▊ ") for line in screen_text(app).splitlines())
        assert "(the current files are backed up first) · escape back" in flat


async def test_run_view_gives_long_arm_names_the_room_and_labels_the_sparkline() -> None:
    from eloledger.tui.sources import SnapshotSource
    from eloledger.tui.testing import sample_counters

    counters = sample_counters(rows=20)
    counters.arm("self_consistency_over_5").planned = 10
    counters.apply_row({"arm": "self_consistency_over_5", "status": "ok", "total_tokens": 9})
    app = EloLedgerApp(source=SnapshotSource(counters, label="x.jsonl", state="running"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        text = screen_text(app)
        assert "self_consistency_over_5 " in text  # whole, in both lists
        assert text.count("self_consistency_over_5") == 2
    app = EloLedgerApp(source=SnapshotSource(counters, label="x.jsonl", state="running"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        assert "tokens/s, last 2 min" in screen_text(app)
