"""Helpers for tests and benchmarks of the TUI: the screen as plain text, the one wait
(:func:`until`) and conditions for it, sample counters."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.app import App
from textual.widgets import DataTable, Footer

from eloledger.runner.counters import RunCounters
from eloledger.tui.run_view import RunView


def screen_text(app: App) -> str:
    """What a user would read on the terminal right now (no colours)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


def tables_measured(app: App) -> bool:
    """Every table on the screen has measured the rows last put in it, so a read of the screen
    now draws it at its columns' widths. Check it before :func:`screen_text` in a condition:
    a table drawn before it measured its rows shows columns as wide as their titles, and keeps
    those lines (Textual caches them) until its rows or cursor change."""
    return not any(
        table._require_update_dimensions or table._new_rows or table._updated_cells
        for table in app.screen.query(DataTable)
    )


def nothing_pending(app: App) -> bool:
    """Nothing is pending: no message waits in the app, its screen or a widget on it, no
    callback waits for the next refresh (a redraw at the laid-out size, say), and every table
    has measured its rows. A condition for a capture that must not catch a redraw half done."""
    screen = app.screen
    if any(
        not pump._message_queue.empty() for pump in (app, *screen.walk_children(with_self=True))
    ):
        return False
    return not screen._callbacks and tables_measured(app)


def run_summary_whole(app: App) -> bool:
    """The Run view's status block has a row for each line of its text. A block that grew is
    laid out a frame after its text changed; read before that, the screen shows its first lines
    only. A condition for :func:`until`, next to what the test reads."""
    view = app.query_one("#run-view", RunView)
    summary = view.query_one("#run-summary")
    return summary.display and summary.size.height >= view._summary_text.count("\n") + 1


def footer_current(app: App) -> bool:
    """The footer holds a key for each binding shown now, and no other. It is recomposed a
    refresh or two after the focus moves or a state shows or hides a binding; read before
    that, it offers the keys of before. A condition for :func:`until`, next to what the test
    reads of the footer as drawn."""
    bindings = app.screen.active_bindings
    shown = {b.action for _, b, _, _ in bindings.values() if b.show}
    palette = bindings.get(app.COMMAND_PALETTE_BINDING)
    extra = {palette.binding.action} if palette is not None else set()
    held = {getattr(key, "action", None) for key in app.screen.query_one(Footer).query("FooterKey")}
    return shown <= held and held - shown <= extra


def sample_counters(rows: int = 40) -> RunCounters:
    """Deterministic counters: three arms, a few 429s, server-reported usage."""
    counters = RunCounters(budget_tokens=50_000, concurrency=8)
    for i in range(rows):
        failed = i % 7 == 0
        counters.apply_row(
            {
                "arm": f"best_of_{1 + i % 3}",
                "task_id": f"arith-{i:03d}",
                "sample": i % 4,
                "status": "error" if failed else "ok",
                "error_class": "rate_limit" if failed else None,
                "http_status": 429 if failed else 200,
                "prompt_tokens": 100,
                "completion_tokens": 50 + i,
                "usage_source": "server",
                "latency_ms": 300 + i * 10,
            }
        )
    for arm in counters.arms.values():
        arm.planned = 20
    return counters


async def until(predicate: Callable[[], object], seconds: float = 30.0) -> bool:
    """Wait (polling every 50 ms) until ``predicate()`` is true; its last value either way."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())
