"""`eloledger watch` of a finished run at 80×24 under NO_COLOR: every tab's lines are whole
(a line that would wrap mid-phrase is cut at a part or given a second line of its own), and the
footer offers only keys that do something (no "Pause view" once the run has finished)."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from eloledger.tui.app import EloLedgerApp
from eloledger.tui.elo_tab import EloTab
from eloledger.tui.testing import footer_current, screen_text, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def finished_run(folder: Path) -> Path:
    """The shipped example run (its ledger and its comparisons: a finished run), under a
    long folder name as a demo's is."""
    folder = folder / "home" / ".local" / "share" / "eloledger" / "demo" / "20261203-125900"
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLES / "ledger.jsonl", folder / "run.jsonl")
    shutil.copy(EXAMPLES / "comparisons.csv", folder / "run.comparisons.csv")
    return folder / "run.jsonl"


def lines_of(app: EloLedgerApp, widget_id: str) -> list[str]:
    widget = app.query_one(widget_id)
    region = widget.region
    rows = screen_text(app).splitlines()[region.y : region.y + region.height]
    return [row[region.x : region.x + region.width].strip() for row in rows]


@pytest.fixture
def no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


async def test_finished_run_tabs_fit_80_columns(tmp_path: Path, no_color: None) -> None:
    app = EloLedgerApp(watch=finished_run(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: "run finished" in screen_text(app))
        # the footer follows the state: recomposed, then drawn, after "run finished"
        drawn: list[str] = []  # the footer as drawn (blank for a frame while it is recomposed)

        def footer() -> str:
            drawn.append(" ".join(lines_of(app, "Footer")))
            return drawn[-1]

        assert await until(lambda: footer_current(app) and "Follow tail" in footer()), drawn[-3:]
        assert "Pause view" not in drawn[-1], drawn[-1]
        ticks = app.run_view.ticks
        await pilot.press("p")  # not offered, and does nothing
        # a tick after the key has redrawn the state line (and would have said "view paused")
        assert await until(lambda: app.run_view.ticks > ticks + 1)
        await pilot.pause()
        assert "view paused" not in screen_text(app)

        await pilot.press("4")
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None)
        # the status line and the rows' key under the table, laid out
        assert await until(lambda: "rows: knee" in " ".join(lines_of(app, "#elo-rows")))
        status = lines_of(app, "#elo-status")
        assert len(status) == 1 and "anchor" in status[0] and "knee: " in status[0], status
        assert status[0].endswith("run.jsonl"), status  # the path gives way in its middle
        rows = lines_of(app, "#elo-rows")
        assert rows[0].startswith("rows: knee") and rows[0].endswith("dominated"), rows
        assert all(len(line) <= 78 for line in rows)
        if len(rows) > 1:  # the columns left out, on a line of their own
            assert rows[1].startswith("hidden: ") and len(rows) == 2, rows

        assert await until(lambda: tab.has_focus_within)  # where "v" goes
        await pilot.press("v")
        assert await until(lambda: tab.curves is not None)
        # the curves' status line and their legend (its reference line, with its keys)
        assert await until(lambda: "v: back" in " ".join(lines_of(app, "#elo-status")))
        assert await until(
            lambda: any(line.startswith("···") for line in lines_of(app, "#elo-legend"))
        )
        status = lines_of(app, "#elo-status")
        assert status[0].startswith("budget curves") and "v: back" in status[0], status
        legend = lines_of(app, "#elo-legend")
        reference = next(line for line in legend if line.startswith("···"))
        assert reference.endswith("e: export"), legend  # one line with its keys
