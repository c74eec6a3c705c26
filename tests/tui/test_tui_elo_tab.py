"""The Elo tab split by job, and its last mile.

Real parts throughout: the real app under Textual's Pilot, the real CLI (``eloledger elo``) in
a subprocess on the same files, real files in a temporary HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import pytest
from textual.widgets import DataTable
from textual_plot import PlotWidget

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_data import COLUMNS, cell
from eloledger.tui.elo_plot import (
    FRONTIER_GLYPH,
    REFERENCE_GLYPH,
    REFERENCE_MARKER,
    EloAxisFormatter,
    even_ticks,
)
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.elo_table import fit_columns
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


async def loaded(pilot, app: EloLedgerApp) -> EloTab:
    tab = app.query_one(EloTab)
    assert await until(lambda: tab.data is not None)
    await pilot.pause(0.3)
    return tab


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
        labels = []
        for line in region_lines(app, plot):
            head = line[: plot.margin_left].strip()
            if head.lstrip("-").isdigit():
                labels.append(int(head))
        assert len(labels) >= 2, region_lines(app, plot)
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


def test_fit_columns_drops_empty_then_constant_then_the_clis_order() -> None:
    titles = [t for _, t, _ in COLUMNS]
    rows = [["x"] * len(COLUMNS), ["y"] * len(COLUMNS)]
    keys = [k for k, _, _ in COLUMNS]
    for row in rows:
        row[keys.index("pass_at_k")] = ""  # empty
    rows[0][keys.index("games")] = rows[1][keys.index("games")] = "320"  # constant
    full = sum(max(len(t), 3) + 2 for t in titles)
    every = fit_columns(titles, rows, 1000)
    assert every == list(range(len(COLUMNS)))
    one_less = fit_columns(titles, rows, full - 3)
    assert keys.index("pass_at_k") not in one_less and keys.index("games") in one_less
    two_less = fit_columns(titles, rows, full - len("pass@k") - 2 - 3)
    assert keys.index("games") not in two_less
    assert keys.index("delta_elo") in two_less  # varying columns stay while a constant can go
    tiny = fit_columns(titles, rows, 10, keep=(keys.index("pass_at_1"),))
    assert [keys[i] for i in tiny] == ["name", "elo", "ci", "pass_at_1"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_table_shows_whole_columns_and_every_number_uncut(size) -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=size) as pilot:
        tab = await loaded(pilot, app)
        table = app.query_one("#elo-table", DataTable)
        assert table.max_scroll_x == 0  # nothing sits off the right edge, half shown
        shown = [str(c.key.value) for c in table.ordered_columns]
        assert shown[:3] == ["name", "elo", "ci"]
        digits = {k: d for k, _, d in COLUMNS}
        lines = region_lines(app, table)
        for p in tab.sorted_players():
            line = next(line for line in lines if f" {p['name']} " in f"{line} ")
            for key in shown[1:]:
                text = cell(p, key, digits[key])
                assert f" {text}" in f"{line} ", (key, text, line)  # whole, never 0.609 -> 0.6
        hidden = tab.query_one("#elo-table").hidden
        rows_line = " ".join(" ".join(region_lines(app, tab.query_one("#elo-rows"))).split())
        if hidden:
            assert "hidden: " + ", ".join(hidden) in rows_line
        if size == (120, 40):
            assert not hidden  # room for every column
        else:
            assert "pass@1" in " ".join(lines)  # the CLI's 80-column set keeps pass@1


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
            await pilot.press("s", "s")  # sort by tok/task, cheapest first
            await pilot.pause(0.2)
            order = [p["name"] for p in tab.sorted_players()]
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
