"""The TUI's curves view shows checkpoint curves against repeated sampling,
and its `e`xport writes the figure `eloledger curve --plot` writes (SVG and PNG)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from textual_plot import PlotWidget

from checkpoint_truth import planted_rows, write_ledger
from eloledger.rating.comparisons import scored_comparisons
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import screen_text, until


def _inputs(folder: Path) -> tuple[Path, Path]:
    rows = planted_rows(2, tasks=8, chat_arm=True)
    ledger = write_ledger(folder / "ledger.jsonl", rows)
    comps = scored_comparisons([r for r in rows if r["role"] == "sample"])
    lines = ["task_id,a,b,outcome"] + [
        f"{comps.tasks[t]},{comps.players[i]},{comps.players[j]},{o}"
        for t, i, j, o in zip(comps.task, comps.i, comps.j, comps.outcome, strict=True)
    ]
    path = folder / "comparisons.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, ledger


def flat_screen(app: EloLedgerApp) -> str:
    """The screen's words on one line (a phrase may wrap)."""
    return " ".join(screen_text(app).split())


async def test_curves_view_draws_checkpoints_and_exports_the_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # exports go next to the run's files, never the cwd
    app = EloLedgerApp(initial_tab="elo", elo_inputs=_inputs(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None and tab.has_focus_within)
        await pilot.press("v")
        assert await until(lambda: tab.curves is not None)
        said = ("plateau: below", "beater: above", "repeated sampling", "e: export")
        assert await until(lambda: all(words in flat_screen(app) for words in said))
        assert hasattr(tab.curves, "axis")  # the checkpoint fit, not the sampling curves
        plot = app.query_one("#elo-plot", PlotWidget)
        lines = [d for d in plot._datasets if type(d).__name__ == "LinePlot"]
        dots = [d for d in plot._datasets if getattr(d, "marker", "") == "·"]
        assert len(lines) == len(tab.curves.arms) and len(dots) == 1  # + one dotted sampling line
        text = flat_screen(app)
        assert "plateau: below" in text and "beater: above" in text
        assert "repeated sampling" in text and "e: export" in text
        await pilot.press("e")
        assert await until(lambda: len(tab.exported) == 2)
        svg, png = tab.exported
        assert svg.suffix == ".svg" and png.suffix == ".png" and svg.parent == tmp_path
        root = ET.parse(svg).getroot()
        ids = {el.get("id") for el in root.iter() if el.get("id")}
        assert {"series-plateau", "line-plateau", "series-kshot", "slows-plateau"} <= ids
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert tab.data is not None and tab.view == "curves"  # e did not load the example
