"""`eloledger watch` on a pty under TERM=screen (16 colours, as Rich detects it) and
screen-256color: arm names keep their own colour (they used to map to the same red as
errors) and the request list's scrollbar shows (its track used to map to the background).
The colours are those the terminal receives, read cell by cell from the app's output; each
case starts the real app once on a pty (2–8 s on a loaded 2-core machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eloledger.ledger import LedgerWriter
from pty_app import AppOnPty
from terminal_screen import Pen, TerminalScreen

RED = {"31", "91", "38;5;1", "38;5;9", "38;5;160", "38;5;196", "38;5;167", "38;5;203"}


def long_run(folder: Path) -> Path:
    """Three arms, 60 requests (more than the request list shows at 80×24), one error."""
    ledger = folder / "run.jsonl"
    with LedgerWriter(ledger) as writer:
        for i in range(60):
            failed = i == 59
            writer.append(
                {
                    "task_id": f"t{i:02d}",
                    "arm": f"arm_{'abc'[i % 3]}",
                    "status": "error" if failed else "ok",
                    "error_class": "server_error" if failed else None,
                    "total_tokens": 120,
                    "latency_ms": 80.0 + i,
                }
            )
    # a run's comparisons file: the run is over (the view says "run finished")
    (folder / "run.comparisons.csv").write_text("task_id,winner,loser\nt0,arm_a,arm_b\n")
    return ledger


def shown(pen: Pen) -> tuple[str, str]:
    """(foreground, background) as the cell shows them (reverse video swaps them)."""
    return (pen.bg, pen.fg) if pen.reverse else (pen.fg, pen.bg)


@pytest.mark.parametrize("term", ["screen", "screen-256color"])
def test_arm_names_are_not_red_and_the_scrollbar_shows(tmp_path: Path, term: str) -> None:
    app = AppOnPty(
        ["watch", str(long_run(tmp_path))],
        env={"TERM": term, "ELOLEDGER_THEME": "eloledger-dark"},
        unset=("COLORTERM", "NO_COLOR", "TEXTUAL_COLOR_SYSTEM"),
    )
    try:
        out = app.read_until(b"run finished")
        out += app.settle(quiet=1.0)
    finally:
        app.stop()
    screen = TerminalScreen(80, 24).feed(out)
    text = screen.text()

    y, x = screen.find("arm_b ")  # the arm table's row (the first on the screen)
    arm_fg = shown(screen.cells[y][x].pen)[0]
    y, x = screen.find("error  arm_")  # the failed request's status cell
    error_fg = shown(screen.cells[y][x].pen)[0]
    assert arm_fg not in RED and arm_fg != error_fg, (arm_fg, error_fg, text)

    # the request list: from under its heading to above the footer
    top = screen.find("status arm")[0] + 1
    rows = range(top, screen.rows - 1)
    assert len(rows) >= 3, text
    for y in rows:
        body = shown(screen.cells[y][0].pen)[1]
        bar = shown(screen.cells[y][screen.cols - 1].pen)[1]
        assert bar != body, f"row {y}: the scrollbar cell has the list's background {body!r}"
    thumb = {shown(screen.cells[y][screen.cols - 1].pen) for y in rows}
    assert len(thumb) >= 2, thumb  # a thumb that stands out from the track
