"""The Elo tab split by job, and its last mile.

Real parts throughout: the real app under Textual's Pilot, the real CLI (``eloledger elo``) in
a subprocess or in-process on the same files, real files in a temporary HOME. Waits are for what
the test reads (``until``), never a fixed pause.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import DataTable
from textual_plot import PlotWidget

from eloledger.cli import main
from eloledger.report.elo_columns import cell_text, give_way_order, row_texts
from eloledger.runner.demo import demo_spec_path
from eloledger.runner.spec import load_spec
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_plot import (
    FRONTIER_GLYPH,
    REFERENCE_GLYPH,
    REFERENCE_MARKER,
    EloAxisFormatter,
    even_ticks,
)
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.elo_table import EloTable, shown_columns
from eloledger.tui.sources import LiveRun
from eloledger.tui.testing import screen_text, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))
SIZES = [(80, 24), (120, 40)]


def run_copy(folder: Path) -> tuple[Path, Path]:
    """The shipped example copied into ``folder`` (a run's folder of our own)."""
    folder.mkdir(parents=True, exist_ok=True)
    comps = Path(shutil.copy(EXAMPLES / "comparisons.csv", folder / "comparisons.csv"))
    ledger = Path(shutil.copy(EXAMPLES / "ledger.jsonl", folder / "ledger.jsonl"))
    return comps, ledger


def cli(*args: str) -> str:
    """``eloledger ARGS`` as a user runs it (a subprocess of this interpreter)."""
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def region_lines(app: EloLedgerApp, widget) -> list[str]:
    lines = screen_text(app).splitlines()
    r = widget.region
    return [line[r.x : r.right] for line in lines[r.y : r.bottom]]


def drawn(app: EloLedgerApp) -> bool:
    """The fit is in, every arm's row and the plot's legend on screen."""
    tab = app.query_one(EloTab)
    if tab.data is None:
        return False
    table = "\n".join(region_lines(app, app.query_one("#elo-table", DataTable)))
    on_screen = all(f" {p['name']} " in f"{table} " for p in tab.data.players)
    return on_screen and "letters: the arms" in screen_text(app)


async def loaded(pilot, app: EloLedgerApp) -> EloTab:
    assert await until(lambda: drawn(app)), screen_text(app)
    return app.query_one(EloTab)


async def sort_by(pilot, tab: EloTab, key: str) -> None:
    """Press ``s`` until the table is sorted by ``key`` (it must be on screen)."""
    for _ in range(len(tab.columns())):
        if tab.sort_key == key:
            return
        await pilot.press("s")
    assert tab.sort_key == key


# -- item 3: round, even Elo ticks ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "most", "wanted"),
    [
        (990, 1420, 5, [1000, 1100, 1200, 1300, 1400]),
        (990, 1420, 4, [1000, 1200, 1400]),
        (940, 1460, 8, [1000, 1100, 1200, 1300, 1400]),
        (940, 1460, 11, [950 + 50 * i for i in range(11)]),
        (1003, 1007, 5, [1003, 1004, 1005, 1006, 1007]),
        (-120, 130, 6, [-100, -50, 0, 50, 100]),
    ],
)
def test_even_ticks_are_multiples_of_one_round_step(low, high, most, wanted) -> None:
    ticks = even_ticks(low, high, most)
    assert ticks == pytest.approx(wanted)
    assert len(ticks) <= most
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1  # one step, evenly spaced
    (step,) = steps
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 9) in (1, 2, 5)


def test_elo_axis_gives_no_more_ticks_than_half_the_rows() -> None:
    formatter = EloAxisFormatter(rows=6)
    ticks, labels = formatter.get_ticks_and_labels(950, 1450)
    assert len(ticks) <= 3 and labels == [f"{t:.0f}" for t in ticks]
    assert ticks == [1000, 1200, 1400]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_elo_axis_labels_on_screen_are_evenly_spaced(size) -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        plot = app.query_one("#elo-plot", PlotWidget)

        def axis_labels() -> list[int]:
            heads = [line[: plot.margin_left].strip() for line in region_lines(app, plot)]
            return [int(head) for head in heads if head.lstrip("-").isdigit()]

        assert await until(lambda: len(axis_labels()) >= 2), region_lines(app, plot)
        labels = axis_labels()
        steps = {a - b for a, b in zip(labels, labels[1:], strict=False)}
        assert len(steps) == 1 and steps.pop() in (50, 100, 200, 250, 500), labels


# -- item 4: the plot reads without colour --------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_color_legend_and_plot_tell_every_series_apart(monkeypatch, size) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=size) as pilot:
        tab = await loaded(pilot, app)
        legend = "\n".join(region_lines(app, app.query_one("#elo-legend")))
        frontier = next(line for line in legend.splitlines() if "frontier" in line)
        glyph_f = frontier.split(" frontier")[0].split()[-1]
        glyph_r = frontier.split(" best-of-k")[0].split()[-1]
        assert (glyph_f, glyph_r) == (FRONTIER_GLYPH, REFERENCE_GLYPH)
        assert set(glyph_f).isdisjoint(glyph_r)  # no glyph is shared by the two lines
        inside = "\n".join(region_lines(app, app.query_one("#elo-plot", PlotWidget)))
        assert REFERENCE_MARKER in inside  # the dotted reference is on the plot
        assert any("\u2801" <= ch <= "\u28ff" for ch in inside)  # and the braille frontier
        for letter in tab.plot_letters().values():  # every arm by its letter
            assert letter in inside
        assert "letters: the arms (table)" in legend


# -- item 5: never cut a number ------------------------------------------------------------------


def test_shown_columns_leave_out_the_start_of_the_order_then_from_the_right() -> None:
    widths = [10, 8, 12, 6, 6, 6]
    order = [4, 3]  # the CLI's give-way order for this table
    assert shown_columns(widths, order, 100) == [0, 1, 2, 3, 4, 5]
    assert shown_columns(widths, order, 42) == [0, 1, 2, 3, 5]  # the shortest start: one
    assert shown_columns(widths, order, 36) == [0, 1, 2, 5]
    assert shown_columns(widths, order, 36, keep={4}) == [0, 1, 2, 4]  # the sorted one stays
    # past the order (where the CLI cuts names with "…"): from the right, never ``always``
    assert shown_columns(widths, order, 30, always={0, 1, 2}) == [0, 1, 2]
    assert shown_columns(widths, order, 5, always={0, 1, 2}) == [0, 1, 2]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_table_shows_whole_columns_and_every_number_uncut(size) -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=size) as pilot:
        tab = await loaded(pilot, app)
        table = app.query_one("#elo-table", EloTable)
        assert table.max_scroll_x == 0  # nothing sits off the right edge, half shown
        shown = [str(c.key.value) for c in table.ordered_columns]
        assert shown[:3] == ["name", "elo", "ci"]
        by_key = {c.key: c for c in tab.columns()}
        lines = region_lines(app, table)
        for p in tab.sorted_players():
            line = next(line for line in lines if f" {p['name']} " in f"{line} ")
            for key in shown[1:]:
                text = cell_text(p, by_key[key])
                assert f" {text}" in f"{line} ", (key, text, line)  # whole, never 0.609 -> 0.6
        assert table.hidden == [c.title for c in tab.columns() if c.key not in shown]
        rows_line = " ".join(" ".join(region_lines(app, tab.query_one("#elo-rows"))).split())
        assert f"hidden: {', '.join(table.hidden[:2])}, " in rows_line
        assert {"tok/task", "d_elo/1k", "marg/1k", "pass@1"} <= {
            c.title for c in tab.columns() if c.key in shown
        }  # the CLI's 80-column set
        if size == (120, 40):
            assert "tokens_per_success" in shown and "dominated" in shown


# -- item 6: exports next to the run, the whole path, the sort, the CLI's CSV --------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_exports_go_next_to_the_run_and_say_the_whole_path(
    monkeypatch, tmp_path: Path, size
) -> None:
    short = Path(tempfile.mkdtemp(prefix="el-", dir="/tmp"))  # a path short enough for 80 cols
    try:
        comps, ledger = run_copy(short / "run")
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        monkeypatch.chdir(cwd)
        app = EloLedgerApp(initial_tab="elo", elo_inputs=(comps, ledger))
        async with app.run_test(size=size, notifications=True) as pilot:
            tab = await loaded(pilot, app)
            await sort_by(pilot, tab, "tokens_per_task")  # cheapest first
            table = app.query_one("#elo-table", DataTable)
            order = [p["name"] for p in tab.sorted_players()]
            assert await until(lambda: [str(k.value) for k in table.rows] == order)
            assert order[0] == "best_of_1"
            await pilot.press("c")
            assert await until(lambda: len(tab.exported) == 1)
            csv_path = tab.exported[0]
            assert csv_path.parent == comps.parent and not list(cwd.iterdir())

            def path_on_one_line() -> bool:
                return any(str(csv_path) in line for line in screen_text(app).splitlines())

            assert await until(path_on_one_line, seconds=10), screen_text(app)
            await pilot.press("m")
            assert await until(lambda: len(tab.exported) == 2)
        md_path = tab.exported[1]
        assert md_path.parent == comps.parent and md_path.suffix == ".md"
        # CSV: byte for byte what `eloledger elo --format csv` prints for the same files
        expected = cli("elo", str(comps), "--ledger", str(ledger), "--format", "csv")
        assert csv_path.read_text(encoding="utf-8") == expected.rstrip("\n") + "\n"
        # Markdown: the table's rows in the sort on screen (tok/task ascending)
        body = [line for line in md_path.read_text().splitlines() if line.startswith("| ")]
        names = [line.split("|")[1].strip() for line in body[1:] if "---" not in line]
        assert names == order
    finally:
        shutil.rmtree(short, ignore_errors=True)


async def test_example_exports_go_to_the_documented_exports_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ELOLEDGER_EXPORTS", raising=False)
    import platformdirs

    folder = Path(platformdirs.user_data_dir("eloledger", appauthor=False)) / "exports"
    assert str(folder).startswith(os.environ["HOME"]) or "XDG_DATA_HOME" in os.environ
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(120, 40)) as pilot:
        tab = await loaded(pilot, app)
        await pilot.press("m")
        assert await until(lambda: tab.exported)
    assert tab.exported[0].parent == folder  # not the package's folder, not the cwd
    assert not list(tmp_path.iterdir())
    assert not list(EXAMPLES.glob("elo-*"))


# -- the tab's intervals are the CLI's (the clustered sandwich) -----------------


async def test_tab_intervals_equal_the_clis_for_the_same_files(tmp_path: Path) -> None:
    comps, ledger = run_copy(tmp_path / "run")
    report = json.loads(cli("elo", str(comps), "--ledger", str(ledger), "--format", "json"))
    expected = {p["name"]: (p["elo"], p["ci_low"], p["ci_high"]) for p in report["players"]}
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comps, ledger))
    async with app.run_test(size=(80, 24)) as pilot:
        tab = await loaded(pilot, app)
        got = {p["name"]: (p["elo"], p["ci_low"], p["ci_high"]) for p in tab.data.players}
    assert got.keys() == expected.keys()
    for name, values in expected.items():
        assert got[name] == pytest.approx(values, rel=1e-9, abs=1e-9), name


# -- one table on both faces: titles, cells and the columns a narrow screen leaves out -----------


def cli_table(text: str) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The titles, each player's cells and the left-out titles of ``eloledger elo``'s table,
    read by the spans of its dashed rule (a blank cell stays a blank cell)."""
    lines = text.splitlines()
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    titles = [lines[0][a:b].strip() for a, b in spans]
    rows = {}
    for line in lines[2:]:
        if not line.strip() or line.startswith("("):
            break
        cells = [line[a:b].strip() for a, b in spans]
        rows[cells[0]] = cells
    flat = " ".join(text.split())
    found = re.search(r"\(not shown to fit \d+ columns: (.*?); --wide shows all\)", flat)
    parts = found.group(1).split(", ") if found else []
    hidden = [re.sub(r" \((.*) in every row\)$", "", part) for part in parts]
    return titles, rows, hidden


def tab_table(app: EloLedgerApp) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The same three from the Elo tab's DataTable: labels without the sort arrow, each row's
    cells with the arm's plot letter taken off its name."""
    tab = app.query_one(EloTab)
    table = app.query_one("#elo-table", EloTable)
    columns = table.ordered_columns
    titles = [str(c.label).rstrip("↑↓") for c in columns]
    letters = tab.plot_letters()
    rows = {}
    for key in table.rows:
        name = str(key.value)
        cells = [str(table.get_cell(key, c.key)) for c in columns]
        assert cells[0] == f"{letters[name]} {name}"
        rows[name] = [name, *cells[1:]]
    return titles, rows, table.hidden


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_cli_and_tab_show_the_same_table_of_the_demo(
    demo_run, monkeypatch, capsys, size
) -> None:
    """One real fit (the demo's files) on both faces at the same width: the same titles in the
    same order, the same text in every cell, and the same columns left out, in the one
    give-way order. Only the screen's own marks differ: the sort arrow and the plot letters."""
    files = (demo_run.comparisons, demo_run.ledger)
    monkeypatch.setenv("COLUMNS", str(size[0]))
    assert main(["elo", str(files[0]), "--ledger", str(files[1])]) == 0
    cli_titles, cli_rows, cli_hidden = cli_table(capsys.readouterr().out)

    app = EloLedgerApp(initial_tab="elo", elo_inputs=files)
    async with app.run_test(size=size) as pilot:
        tab = await loaded(pilot, app)
        titles, rows, hidden = tab_table(app)
        columns = tab.columns()
        order = give_way_order(columns, row_texts(tab.data.players, columns))
    assert titles == cli_titles
    assert rows == cli_rows
    assert hidden == cli_hidden and hidden  # a narrow screen: some columns left out, the same
    gone = [columns[i].title for i in order[: len(hidden)]]
    assert sorted(gone) == sorted(hidden)  # the first ones of the one order
    assert tab.data.anchor == "cot"  # `eloledger elo` without a spec: the cheapest arm


async def test_after_the_demo_the_tab_anchors_where_the_run_does(demo_run) -> None:
    """The demo's table (`eloledger demo --headless`) sets its baseline best_of_1 at 1000; the
    tab, filled when the same run ends in the app, anchors there too (it read cot, the
    cheapest arm, as `eloledger elo` on the bare files does)."""
    app = EloLedgerApp(initial_tab="elo")
    async with app.run_test(size=(80, 24)) as pilot:
        app.live_source = LiveRun(load_spec(demo_spec_path()))  # the run that just ended
        result = SimpleNamespace(
            stopped="completed",
            ledger_path=demo_run.ledger,
            comparisons_path=demo_run.comparisons,
            comparisons=len(demo_run.comparisons.read_text().splitlines()) - 1,
            arms=[],
        )
        app._run_finished(result)
        tab = await loaded(pilot, app)
        assert tab.data.anchor == demo_run.report["anchor"] == "best_of_1"
        assert await until(lambda: "anchor best_of_1 = 1000 Elo" in screen_text(app))
        players = {p["name"]: p for p in tab.data.players}
        expected = {p["name"]: p["elo"] for p in demo_run.report["players"]}
        assert {n: p["elo"] for n, p in players.items()} == pytest.approx(expected)
