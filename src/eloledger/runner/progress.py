"""Headless progress: one line at most every ``interval`` seconds, pulled from the counters.

A line is one line of the terminal: a progress line that wraps turns every
second into two rows of noise, so the least useful parts give way to the width first. Piped
to a file (no terminal, no ``COLUMNS``) a line carries every part.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, TextIO

from eloledger.runner.counters import RunCounters
from eloledger.tables import terminal_width

if TYPE_CHECKING:
    from eloledger.runner.shard import Shard
    from eloledger.runner.spec import ExperimentSpec


def planned_calls(
    spec: ExperimentSpec, task_count: int, shard: Shard | None = None
) -> dict[str, int]:
    """Calls each arm makes: owned tasks × sessions × samples × rounds.

    The runner sets its counters from this and ``eloledger watch`` reads the same numbers
    from the spec beside a ledger, so a followed run's bar reaches 100% exactly when the
    run's does. Debate and refine arms write one ledger row per round; a plan without the
    rounds ran past 100% (552 of 276).
    """
    tasks = sum(1 for t in range(task_count) if shard is None or shard.owns(t))
    return {arm.name: tasks * spec.sessions * arm.n * arm.rounds for arm in spec.arms}


def progress_line(c: RunCounters, width: int | None = None) -> str:
    """The counters as one line of at most ``width`` characters (None: every part).

    The rate counts only the tokens of this process's calls: a resumed run starts with the
    ledger's earlier tokens in its total, and counting those as just spent read as
    "831,763 tok/s" in the first seconds.
    """
    planned = sum(a.planned for a in c.arms.values())
    done = sum(a.done for a in c.arms.values())
    errors = sum(a.errors for a in c.arms.values())
    elapsed = c.elapsed_s()
    live = c.total_tokens + c.estimated_tokens
    rate = max(0, live - c.resumed_tokens) / elapsed
    # (part, rank): the highest rank gives way first; rank 0 always stays
    parts: list[tuple[str, int]] = [
        (f"[{elapsed:6.1f}s] calls {done:,}" + (f"/{planned:,}" if planned else ""), 0),
        (f"errors {errors}", 1 if errors else 5),
        (f"retries {c.retries}", 3 if c.retries else 6),
        (f"in flight {c.in_flight}", 4),
        (f"tokens {live:,}", 0),
        (f"(~{c.estimated_tokens:,} streaming)" if c.estimated_tokens else "", 7),
        (f"{rate:,.0f} tok/s", 1),
    ]
    if c.budget_tokens:
        parts.append((f"budget {100 * live / c.budget_tokens:.0f}%", 2))
    if c.rate_limited:
        parts.append((f"429s {c.rate_limited}", 3))
    if c.paused:
        parts.append(("PAUSED", 0))
    parts = [(text, rank) for text, rank in parts if text]

    def joined() -> str:
        out = ""
        for text, _ in parts:
            # the streaming estimate belongs to the token count before it
            out += (" " if text.startswith("(~") else " | " if out else "") + text
        return out

    line = joined()
    while width is not None and len(line) > width and any(rank for _, rank in parts):
        worst = max(range(len(parts)), key=lambda i: (parts[i][1], i))
        parts.pop(worst)
        line = joined()
    return line


async def report_progress(
    counters: RunCounters, stream: TextIO | None = None, interval: float = 1.0
) -> None:
    """Print progress lines until cancelled (the caller cancels it when the run ends); each
    fits the terminal's width as it is now (a resized window gets lines of its new width)."""
    stream = stream or sys.stderr
    while True:
        await asyncio.sleep(interval)
        print(progress_line(counters, terminal_width(stream)), file=stream, flush=True)
