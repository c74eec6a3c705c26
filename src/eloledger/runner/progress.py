"""Headless progress: one line at most every ``interval`` seconds, pulled from the counters."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from eloledger.runner.counters import RunCounters


def progress_line(c: RunCounters) -> str:
    planned = sum(a.planned for a in c.arms.values())
    done = sum(a.done for a in c.arms.values())
    errors = sum(a.errors for a in c.arms.values())
    elapsed = c.elapsed_s()
    live = c.total_tokens + c.estimated_tokens
    parts = [
        f"[{elapsed:6.1f}s] calls {done}/{planned}"
        if planned
        else f"[{elapsed:6.1f}s] calls {done}",
        f"errors {errors}",
        f"retries {c.retries}",
        f"in flight {c.in_flight}",
        f"tokens {live:,}"
        + (f" (~{c.estimated_tokens:,} streaming)" if c.estimated_tokens else ""),
        f"{live / elapsed:,.0f} tok/s",
    ]
    if c.budget_tokens:
        parts.append(f"budget {100 * live / c.budget_tokens:.0f}%")
    if c.rate_limited:
        parts.append(f"429s {c.rate_limited}")
    if c.paused:
        parts.append("PAUSED")
    return " | ".join(parts)


async def report_progress(
    counters: RunCounters, stream: TextIO | None = None, interval: float = 1.0
) -> None:
    """Print progress lines until cancelled (the caller cancels it when the run ends)."""
    stream = stream or sys.stderr
    while True:
        await asyncio.sleep(interval)
        print(progress_line(counters), file=stream, flush=True)
