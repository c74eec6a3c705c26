"""80×24 is the normal case: every footer hint, prompt and dialog fits."""

from __future__ import annotations

from functools import partial
from importlib import resources
from pathlib import Path

from textual.widgets import Checkbox, TabbedContent

from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import DiffScreen
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.profiles_tab import ProfilesTab, SwitchScreen
from eloledger.tui.testing import footer_current, screen_text, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def footer_line(app: EloLedgerApp) -> str:
    return screen_text(app).splitlines()[-1]


def flat(app: EloLedgerApp, frame: str) -> str:
    """The screen's lines joined, each without the ``frame`` characters at its ends."""
    return " ".join(line.strip(frame) for line in screen_text(app).splitlines())


def shown_hints(app: EloLedgerApp) -> list[str]:
    """The description of every binding the footer should show right now."""
    hints = []
    for _, binding, enabled, _ in app.active_bindings.values():
        if binding.show and enabled and binding.description:
            hints.append(binding.description)
    return hints


def footer_drawn(app: EloLedgerApp, tab: str) -> bool:
    """Focus is in ``tab``, and the footer, recomposed after it moved there, is drawn with the
    hints it should show."""
    pane = app.query_one("#tabs", TabbedContent).get_pane(tab)
    line = footer_line(app)
    hints = all(hint in line for hint in shown_hints(app))
    return pane.has_focus_within and footer_current(app) and hints


async def test_every_footer_hint_fits_at_80_columns() -> None:
    app = EloLedgerApp(elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.query_one(EloTab).data is not None)
        for key, tab in (("1", "profiles"), ("2", "run"), ("3", "doctor"), ("4", "elo")):
            await pilot.press("escape", key)
            assert await until(partial(footer_drawn, app, tab)), (key, footer_line(app))
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
        assert await until(lambda: tab.has_focus_within and tab.selected() is not None)
        await pilot.press("u")
        assert await until(lambda: isinstance(app.screen, SwitchScreen))
        wants = ("which clients?", "Claude Code", "Shell", "scope", "Show the diff (enter)")
        assert await until(lambda: all(wanted in screen_text(app) for wanted in wants))
        text = screen_text(app)
        for wanted in wants:
            assert wanted in text, wanted
        assert await until(lambda: isinstance(app.focused, Checkbox))
        await pilot.press("enter")  # focus is on a checkbox: enter still submits
        assert await until(lambda: isinstance(app.screen, DiffScreen))


async def test_threshold_prompt_and_backups_header_are_not_cut() -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(80, 24)) as pilot:
        elo = app.query_one(EloTab)
        assert await until(lambda: elo.data is not None and elo.has_focus_within)
        await pilot.press("t")
        prompt = "per task (marginal)? enter sets it · escape back"
        assert await until(lambda: prompt in flat(app, "█ ")), flat(app, "█ ")
        await pilot.press("escape", "1")
        profiles = app.query_one(ProfilesTab)
        assert await until(lambda: profiles.has_focus_within)
        await pilot.press("b")
        header = "(the current files are backed up first) · escape back"
        assert await until(lambda: header in flat(app, "█▊ ")), flat(app, "█▊ ")


async def test_run_view_gives_long_arm_names_the_room_and_labels_the_sparkline() -> None:
    from eloledger.tui.sources import SnapshotSource
    from eloledger.tui.testing import sample_counters

    counters = sample_counters(rows=20)
    counters.arm("self_consistency_over_5").planned = 10
    counters.apply_row({"arm": "self_consistency_over_5", "status": "ok", "total_tokens": 9})
    app = EloLedgerApp(source=SnapshotSource(counters, label="x.jsonl", state="running"))
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: screen_text(app).count("self_consistency_over_5") == 2)
        text = screen_text(app)
        assert "self_consistency_over_5 " in text  # whole, in both lists
        assert text.count("self_consistency_over_5") == 2
    app = EloLedgerApp(source=SnapshotSource(counters, label="x.jsonl", state="running"))
    async with app.run_test(size=(120, 40)):
        assert await until(lambda: "tokens/s, last 2 min" in screen_text(app))
