"""The History view at 80×24 shows whole columns and whole numbers: with a real run id and
long arm names its table is wider than the screen, and the DataTable used to cut its last
column at the edge (``19`` for 199, ``154`` for 1545). Columns give way whole, names get "…"."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_history_audit import START, WEEK, _ledger
from test_tui_history_view import open_history
from textual.widgets import DataTable

from eloledger import history
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.testing import screen_text

ARMS = {"base_1": "self_consistency_5_long_arm", "bo4": "best_of_4_with_verifier"}


@pytest.fixture
def wide_index(tmp_path: Path) -> list[dict]:
    for k, (completion, solved) in enumerate([(100, 6), (1545, 7)]):
        run = f"2026120{k}T080000-abc12{k}"
        entry = history.run_entry(_ledger(tmp_path / f"{k}.jsonl", run, START + k * WEEK,
                                          completion, solved))  # fmt: skip
        entry["arms"] = {ARMS[name]: arm for name, arm in entry["arms"].items()}
        history.append_entry(entry)
    return history.read_index()


def cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("no_color", [False, True], ids=["color", "NO_COLOR"])
async def test_history_numbers_are_whole_at_every_size(
    wide_index: list[dict], size: tuple[int, int], no_color: bool, monkeypatch
) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        await open_history(pilot)
        text = screen_text(app)
        assert all(len(line) <= size[0] for line in text.splitlines())
        runs = app.screen.query_one("#history-runs", DataTable)
        shown = [str(c.label) for c in runs.columns.values()]
        expected = history.history_rows(wide_index)
        by_title = {c.title: c for c in history.HISTORY_COLUMNS}
        for row, want in zip(cells(runs), expected, strict=True):
            for title, value in zip(shown, row, strict=True):
                column = by_title[title]
                if column.digits is None and column.key != "tokens":
                    continue  # a name may be cut with "…"; numbers never
                whole = column.cell(want, human=True)
                assert value == whole
                assert whole in text, (title, whole)  # on screen, not cut at the edge
        assert {"time", "run", "arm", "tokens"} <= set(shown)
        if size[0] >= 120:
            assert shown == [c.title for c in history.HISTORY_COLUMNS]  # room for all
        else:
            assert any("…" in line for line in text.splitlines())  # long names were cut
        audit = app.screen.query_one("#history-audit", DataTable)
        titles = [str(c.label) for c in audit.columns.values()]
        assert titles[0] == "week" and titles[-1] == "flag"  # never dropped, even when empty


async def test_demo_arm_names_stay_whole_at_80_columns(tmp_path: Path) -> None:
    """Names are cut only as far as the columns left need: with a demo's run id and arm
    names, the run id gives way and every arm is named whole."""
    demo_arms = {"base_1": "self_consistency_5", "bo4": "best_of_8"}
    run = "20261203T125902-8521ac"
    entry = history.run_entry(_ledger(tmp_path / "demo.jsonl", run, START, 100, 6))
    entry["arms"] = {demo_arms[name]: arm for name, arm in entry["arms"].items()}
    history.append_entry(entry)
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        runs = app.screen.query_one("#history-runs", DataTable)
        shown = [str(c.label) for c in runs.columns.values()]
        arms = [row[shown.index("arm")] for row in cells(runs)]
        assert sorted(arms) == sorted(demo_arms.values()), arms
        assert all(name in screen_text(app) for name in demo_arms.values())
