"""A headless progress line fits one line of the terminal, and
a resumed run's tokens/s counts only the calls this process made.

The run is real: the runner against the embedded simulator over HTTP on 127.0.0.1, and the
demo on an 80-column pseudo-terminal for what a user sees.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import orjson
from test_runner_run import make_spec

from eloledger.runner.counters import RunCounters
from eloledger.runner.progress import progress_line
from eloledger.runner.run import run_experiment
from pty_support import run_on_pty

PROGRESS = re.compile(r"^\[\s*[\d.]+s\] calls ")


def busy_counters() -> RunCounters:
    """Counters as in the middle of a big run: every optional part of the line is on."""
    c = RunCounters(budget_tokens=50_000_000, started_at=time.monotonic() - 100)
    c.arm("best_of_8").planned = 11_500
    for i in range(40):
        c.apply_row(
            {"arm": "best_of_8", "status": "ok", "prompt_tokens": 20_000 + i,
             "completion_tokens": 40_000, "usage_source": "server"}
        )  # fmt: skip
    c.apply_row({"arm": "best_of_8", "status": "error", "error_class": "rate_limit",
                 "http_status": 429, "will_retry": True})  # fmt: skip
    c.apply_row({"arm": "best_of_8", "status": "error", "error_class": "server"})
    c.in_flight = 48
    c.on_tokens("best_of_8", 123_456)
    return c


def test_a_busy_line_fits_80_columns_and_keeps_what_matters() -> None:
    c = busy_counters()
    full = progress_line(c)
    assert len(full) > 100  # what the old line printed, every part on
    for part in ("retries 1", "in flight 48", "(~123,456 streaming)", "429s 1", "budget"):
        assert part in full
    line = progress_line(c, 80)
    assert len(line) <= 80, line
    for part in ("calls 41/11,500", "errors 1", "tokens 2,524,236"):
        assert part in line, line
    # 2,524,236 tokens in the 100 s since the start; a slow machine reaches this line later
    assert re.search(r" 25,[12]\d\d tok/s", line), line
    assert "budget 5%" in progress_line(c, 90)
    assert "streaming" not in line  # the estimate is the first to give way
    assert len(progress_line(c, 40)) <= 45  # never less than calls and tokens


def test_demo_progress_lines_fit_an_80_column_terminal(tmp_path: Path) -> None:
    status, out = run_on_pty(
        ["demo", "--headless", "--bootstrap", "0", "--ledger", str(tmp_path / "d.jsonl")],
        cols=80,
        env={"NO_COLOR": "1"},
        stderr=True,
    )
    assert status == 0, out
    progress = [line for line in out.splitlines() if PROGRESS.match(line)]
    assert len(progress) >= 2, out
    assert all(len(line) <= 80 for line in progress), [len(x) for x in progress]
    assert all("tokens " in line and "tok/s" in line for line in progress)
    # every other line fits too (the intro and the summary wrap between words), but a path
    # longer than the terminal stays whole
    assert all(len(line) <= 80 for line in out.splitlines() if str(tmp_path) not in line), out
    assert "eloledger: demo on the embedded simulator (a fake model on 127.0.0.1;" in out


async def test_a_resumed_run_counts_only_its_own_tokens_per_second(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=6, speed=20, concurrency=4)
    cancel = asyncio.Event()
    first_counters = RunCounters()

    async def cancel_soon() -> None:
        while sum(a.done for a in first_counters.arms.values()) < 10:
            await asyncio.sleep(0.01)
        cancel.set()

    canceller = asyncio.create_task(cancel_soon())
    await run_experiment(spec, counters=first_counters, cancel=cancel)
    await canceller
    rows = [orjson.loads(x) for x in spec.ledger.read_bytes().splitlines()]
    before = sum(r["total_tokens"] or 0 for r in rows if r["role"] == "sample")
    assert before > 0

    counters = RunCounters()
    pause = asyncio.Event()
    pause.set()  # hold every new call: whatever the line shows now comes from the ledger
    task = asyncio.create_task(run_experiment(spec, counters=counters, pause=pause, resume=True))
    while not counters.paused:
        await asyncio.sleep(0.01)
    line = progress_line(counters)
    assert f"tokens {before:,}" in line and "| 0 tok/s" in line, line
    assert counters.resumed_tokens == before
    pause.clear()
    result = await task
    assert result.stopped == "completed" and counters.total_tokens > before
