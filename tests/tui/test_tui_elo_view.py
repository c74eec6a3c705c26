"""The Elo tab at 80×24: pinned arm column, sort marked in the
header, row styles explained, legend outside the plot, labelled points, one reference line.
Waits are for what the test reads (``until``), never a fixed pause."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from textual.widgets import DataTable
from textual_plot import PlotWidget

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def region_text(app: EloLedgerApp, widget) -> str:
    lines = screen_text(app).splitlines()
    r = widget.region
    return "\n".join(line[r.x : r.right] for line in lines[r.y : r.bottom])


async def open_example(pilot, app: EloLedgerApp) -> EloTab:
    """The example fitted, its table filled and the plot's legend on screen."""
    tab = app.query_one(EloTab)

    def drawn() -> bool:
        if tab.data is None:
            return False
        table = region_text(app, app.query_one("#elo-table", DataTable))
        on_screen = all(f" {p['name']} " in f"{table} " for p in tab.data.players)
        return on_screen and "letters: the arms" in screen_text(app)

    assert await until(drawn), screen_text(app)
    return tab


def header(app: EloLedgerApp) -> str:
    """The table's first line on screen ("" while it has none)."""
    lines = region_text(app, app.query_one("#elo-table", DataTable)).splitlines()
    return lines[0] if lines else ""


async def test_table_pins_the_arm_column_and_marks_the_sort() -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await open_example(pilot, app)
        table = app.query_one("#elo-table", DataTable)
        assert "elo↓" in header(app)
        # whole columns only (no column half off the right edge to scroll
        # to); the ones left out are named under the table
        assert table.max_scroll_x == 0
        text = region_text(app, table)
        assert "best_of_8" in text and "games" not in text
        assert "hidden: rank, rank CI, games," in " ".join(screen_text(app).split())
        await pilot.press("s")
        assert await until(lambda: "95% CI↓" in header(app)), header(app)
        assert "elo↓" not in header(app)
        flat = " ".join(screen_text(app).split())
        assert "rows: knee · italic: marg. < 50 Elo/1K (t) · dim: dominated" in flat


async def test_plot_legend_is_outside_and_points_are_labelled() -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        tab = await open_example(pilot, app)
        plot = app.query_one("#elo-plot", PlotWidget)
        inside = region_text(app, plot)
        assert "frontier" not in inside and "best-of-k" not in inside
        assert sum(inside.count(letter) for letter in "ABCDE") >= 5  # every arm is a letter
        legend = region_text(app, app.query_one("#elo-legend"))
        assert "frontier" in legend and "letters: the arms" in legend and "the knee" in legend
        assert plot.region.height >= 8
        await pilot.press("c")  # an export toast
        assert await until(lambda: tab.exported and list(app.screen.query("Toast")))
        toasts = list(app.screen.query("Toast"))
        assert all(not t.region.overlaps(plot.region) for t in toasts)

        def path_shown() -> bool:
            # the toast may wrap a long path over its lines: read it without the line breaks
            # and the toast's border glyphs
            text = "".join("".join(region_text(app, t).replace("▌", "").split()) for t in toasts)
            return str(tab.exported[0]).replace(" ", "") in text

        assert await until(path_shown, seconds=10), screen_text(app)


async def test_curves_view_draws_one_reference_line_at_a_time() -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(80, 24)) as pilot:
        tab = await open_example(pilot, app)
        await pilot.press("v")
        assert await until(lambda: tab.curves is not None)

        def legend() -> str:
            return " ".join(region_text(app, app.query_one("#elo-legend")).split())

        assert await until(lambda: "from " in legend()), legend()
        arms = [a for a in tab.curves.arms if len(a.tokens)]
        assert len(arms) >= 5
        plot = app.query_one("#elo-plot", PlotWidget)
        lines = [d for d in plot._datasets if type(d).__name__ == "LinePlot"]
        assert len(lines) == len(arms)  # the arms; the ONE reference line is dotted
        labels = [d.marker for d in plot._datasets if type(d).__name__ == "ScatterPlot"]
        assert labels.count("·") == 1
        assert set(labels) - {"·"} == {chr(ord("A") + i) for i in range(len(arms))}  # named
        assert f"from {arms[0].name}" in legend()
        await pilot.press("r")
        assert await until(lambda: f"from {arms[1].name}" in legend()), legend()
