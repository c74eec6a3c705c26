"""The TUI's History view: the run index (the `eloledger history` columns) and
the direction audit with its cost-drift flag, on an index written by real ledgers with a planted
drift (the same three weekly runs as tests/history/test_history_audit.py), at 80x24 and 120x40."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_history_audit import START, WEEK, _ledger  # the planted weekly runs, one builder
from textual.widgets import DataTable, Static

from eloledger import history
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.history_view import HistoryScreen
from eloledger.tui.testing import screen_text, tables_measured, until

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def planted(tmp_path: Path) -> list[dict]:
    """Three weekly runs; in week 3 the output triples while the n=1 pass rate stays flat."""
    for k, (run, completion, solved) in enumerate([("r1", 100, 6), ("r2", 110, 7), ("r3", 300, 7)]):
        ledger = _ledger(tmp_path / f"{run}.jsonl", run, START + k * WEEK, completion, solved)
        history.append_entry(history.run_entry(ledger))
    return history.read_index()


async def open_history(pilot) -> HistoryScreen:
    """``h``, then the History view once it has read the index and drawn both tables."""
    app = pilot.app
    await pilot.press("h")
    loaded = await until(lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
    assert loaded, "the History view never loaded"
    screen = app.screen
    tables = screen.query("#history-runs, #history-audit").results(DataTable)
    assert await until(lambda: all(drawn(app, table) for table in tables)), screen_text(app)
    return screen


def drawn(app: EloLedgerApp, table: DataTable) -> bool:
    """Every column title and cell of ``table`` is on screen, once the tables have measured the
    rows put in them (their columns are sized then)."""
    if not tables_measured(app):
        return False
    text = screen_text(app)
    titles = [str(column.label) for column in table.columns.values()]
    return all(title in text for title in titles) and all(
        str(cell) in text for row in _cells(table) for cell in row
    )


def _cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_history_view_shows_the_runs_and_the_planted_drift(
    planted: list[dict], size: tuple[int, int]
) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=size) as pilot:
        screen = await open_history(pilot)
        runs = screen.query_one("#history-runs", DataTable)
        headers = [str(c.label) for c in runs.columns.values()]
        assert headers == [c.title for c in history.HISTORY_COLUMNS]
        rows = _cells(runs)
        assert len(rows) == 6  # 3 runs x 2 arms, as `eloledger history` lists them
        expected = history.history_rows(planted)
        for row, want in zip(rows, expected, strict=True):
            assert row == [c.cell(want, human=True) for c in history.HISTORY_COLUMNS]
        assert [r[1] for r in rows] == ["r1", "r1", "r2", "r2", "r3", "r3"]
        assert rows[0][5] == "0.600" and rows[4][3] == "4,000"  # base_1 pass@1, r3 tokens
        audit = _cells(screen.query_one("#history-audit", DataTable))
        assert [r[-1] for r in audit] == ["", "", "COST DRIFT"]
        status = str(screen.query_one("#history-status", Static).render())
        assert "3 run(s) in ~/.local/share/eloledger/runs.jsonl" in status
        assert "COST DRIFT in 2026-W49" in status
        await pilot.press("a")  # per run: the same flag on r3
        assert await until(lambda: screen.loaded >= 2)
        await pilot.pause()
        audit = _cells(screen.query_one("#history-audit", DataTable))
        assert [(r[0], r[-1]) for r in audit] == [("r1", ""), ("r2", ""), ("r3", "COST DRIFT")]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HistoryScreen)


async def test_history_view_empty_and_bad_index(tmp_path: Path) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_history(pilot)
        assert "No runs indexed yet" in str(screen.query_one("#history-status", Static).render())
        assert screen.query_one("#history-runs", DataTable).row_count == 0
        await pilot.press("escape")
        history.index_path().parent.mkdir(parents=True)
        history.index_path().write_text('{"oops\n{"arms": {}}\n')
        screen = await open_history(pilot)
        status = str(screen.query_one("#history-status", Static).render())
        assert "runs.jsonl:1: not JSON" in status and screen.error is not None


async def test_names_from_the_index_are_shown_as_text(planted: list[dict]) -> None:
    """A run id with markup and a control character is shown, not interpreted."""
    entry = dict(planted[0], run_id="[bold]x\x1b[2J", time_utc="2026-12-30T00:00:00+00:00")
    history.append_entry(entry)
    app = EloLedgerApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_history(pilot)
        ids = {r[1] for r in _cells(screen.query_one("#history-runs", DataTable))}
        assert "[bold]x\x1b[2J" not in ids
        assert any(i.startswith("[bold]x") and "\x1b" not in i for i in ids)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_history_view(snap_compare, planted: list[dict], size: tuple[int, int]) -> None:
    async def opened(pilot) -> None:
        await open_history(pilot)

    assert snap_compare(EloLedgerApp(), terminal_size=size, run_before=opened)


def test_the_index_the_view_read_is_the_clis(planted: list[dict], capsys) -> None:
    """The view and `eloledger history --format json` read the same entries."""
    from eloledger.cli import main

    assert main(["history", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == planted
