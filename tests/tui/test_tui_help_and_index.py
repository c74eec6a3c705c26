"""F1 lists every key the app answers to (h and q included), and a demo started with ctrl+r
in the app reaches the run index (the History view, h), as `eloledger demo` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from eloledger import history
from eloledger.runner.spec import load_spec
from eloledger.tui import app as app_module
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import HELP_TEXT, HelpScreen
from eloledger.tui.doctor_tab import DoctorTab
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.history_view import HistoryScreen
from eloledger.tui.line_list import LineList
from eloledger.tui.profiles_tab import ProfilesTab
from eloledger.tui.run_view import RunView
from eloledger.tui.testing import screen_text, until
from sim_spec import small_demo_spec

SPELLED = {"f1": "F1"}  # how the help writes a key


def keys_of(*owners: type) -> set[str]:
    keys = set()
    for owner in owners:
        for binding in owner.BINDINGS:
            keys.update(k.strip() for k in binding.key.split(","))
    return keys


def test_the_help_names_every_key() -> None:
    keys = keys_of(EloLedgerApp, RunView, ProfilesTab, DoctorTab, EloTab, HistoryScreen, LineList)
    assert {"h", "q", "ctrl+q", "ctrl+r"} <= keys
    missing = sorted(k for k in keys if f"`{SPELLED.get(k, k)}`" not in HELP_TEXT)
    assert not missing, f"keys the F1 help does not name: {missing}"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_f1_shows_h_and_q(size: tuple[int, int]) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        await pilot.press("f1")
        assert await until(lambda: isinstance(app.screen, HelpScreen))
        assert await until(lambda: "q ctrl+q" in screen_text(app)), screen_text(app)
        text = screen_text(app)
        assert "run history" in text and "q ctrl+q" in text  # without scrolling


async def test_a_demo_started_with_ctrl_r_reaches_the_run_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_path = small_demo_spec(tmp_path, 2)  # the demo's own spec on two tasks: seconds
    monkeypatch.setattr(app_module, "_demo_spec", lambda: load_spec(spec_path))
    app = EloLedgerApp(initial_tab="run")
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("ctrl+r")
        assert await until(lambda: bool(history.read_index()), 120)
        entries = history.read_index()
        assert len(entries) == 1
        assert [Path(p).name for p in entries[0]["ledger"]] == ["demo.ledger.jsonl"]
        assert "best_of_8" in entries[0]["arms"]
        await pilot.press("h")
        assert await until(lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        runs = app.screen.query_one("#history-runs", DataTable)
        assert runs.row_count == len(entries[0]["arms"])
