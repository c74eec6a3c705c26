"""Helpers for tests and benchmarks of the TUI: the screen as plain text, sample counters."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.app import App

from eloledger.runner.counters import RunCounters


def screen_text(app: App) -> str:
    """What a user would read on the terminal right now (no colours)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


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
