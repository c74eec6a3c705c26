"""Run view under load: 64 simulated streams, 20,000 token events/s, headless, ~10 s each.

Three runs in one process, same producer, same event loop setup:

  producer   the 64 streams alone, no app               -> the producer's own CPU
  eloledger  the Run view pulling counters at 10 Hz     -> app CPU = total - producer
  baseline   the same view, summary Static.update() per token event (the naive way)

The producer: each stream wakes every 10 ms and emits the token events due since its last
wake (``counters.on_tokens``: plain attribute writes, one per token event); every ~150 tokens
a stream finishes a call (``apply_row``: a rare event that adds a request line). A probe task
sleeps 5 ms in a loop and records how late it wakes: the event-loop lag. CPU is this process's
user+system time (psutil) over wall time, in % of one core. Textual runs headless: it composes
and renders every frame; only the terminal write is skipped.

    .venv/bin/python bench/bench_tui.py               # 10 s per run
    .venv/bin/python bench/bench_tui.py --seconds 2   # quick
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from dataclasses import dataclass

import psutil

from eloledger.runner.counters import RunCounters
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.run_view import RunView
from eloledger.tui.sources import SnapshotSource

STREAMS = 64
WAKE_S = 0.010
PROBE_S = 0.005
ARMS = ("best_of_1", "best_of_2", "best_of_4", "best_of_8", "self_consistency")


@dataclass
class Result:
    name: str
    seconds: float
    events: int
    cpu_pct: float
    lag_p50_ms: float
    lag_p99_ms: float
    ticks: int = 0


class Producer:
    """64 asyncio streams bumping plain counters; ``per_event`` is called per token if set."""

    def __init__(self, counters: RunCounters, rate: float, per_event=None) -> None:
        self.counters = counters
        self.rate = rate
        self.per_event = per_event
        self.stop = False
        self.counters.concurrency = STREAMS

    async def stream(self, index: int) -> None:
        rng = random.Random(index)
        arm = ARMS[index % len(ARMS)]
        per_stream = self.rate / STREAMS
        due = 0.0
        tokens_in_call = 0
        call_len = rng.randint(100, 200)
        sample = 0
        last = time.perf_counter()
        counters = self.counters
        counters.in_flight += 1
        while not self.stop:
            await asyncio.sleep(WAKE_S)
            now = time.perf_counter()
            due += (now - last) * per_stream
            last = now
            n = int(due)
            due -= n
            if n > 8 * per_stream * WAKE_S:  # the loop is saturated: drop what cannot be
                n = int(8 * per_stream * WAKE_S)  # delivered (events/s below shows the shortfall)
            for _ in range(n):
                if self.stop:
                    break
                counters.on_tokens(arm, 1)
                if self.per_event is not None:
                    self.per_event()
            tokens_in_call += n
            if tokens_in_call >= call_len:
                counters.estimated_tokens -= tokens_in_call
                counters.arm(arm).estimated_tokens -= tokens_in_call
                counters.apply_row(
                    {
                        "arm": arm,
                        "task_id": f"task-{rng.randrange(200):03d}",
                        "sample": sample,
                        "status": "ok",
                        "prompt_tokens": 80,
                        "completion_tokens": tokens_in_call,
                        "usage_source": "server",
                        "latency_ms": rng.uniform(300, 3000),
                    }
                )
                sample += 1
                tokens_in_call = 0
                call_len = rng.randint(100, 200)

    async def run(self, seconds: float) -> None:
        tasks = [asyncio.create_task(self.stream(i)) for i in range(STREAMS)]
        await asyncio.sleep(seconds)
        self.stop = True
        await asyncio.wait(tasks, timeout=30)


async def lag_probe(samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(PROBE_S)
        samples.append(max(0.0, time.perf_counter() - start - PROBE_S) * 1000)


async def measure(name: str, seconds: float, rate: float, mode: str) -> Result:
    counters = RunCounters(budget_tokens=10_000_000)
    for arm in ARMS:
        counters.arm(arm).planned = 1000
    view: RunView | None = None
    per_event = None
    if mode == "baseline":

        def per_event() -> None:  # the naive way: redraw the numbers for every token event
            assert view is not None
            view.query_one("#run-summary").update(view.summary_text(source))

    producer = Producer(counters, rate, per_event)
    source = SnapshotSource(counters, label="bench", state="running")
    lags: list[float] = []
    stop = asyncio.Event()
    proc = psutil.Process()

    async def timed() -> tuple[float, float]:
        probe = asyncio.create_task(lag_probe(lags, stop))
        await asyncio.sleep(0.5)  # settle (first paint) before measuring
        lags.clear()
        cpu0 = sum(proc.cpu_times()[:2])
        t0 = time.perf_counter()
        events0 = counters.events
        await producer.run(seconds)
        wall = time.perf_counter() - t0
        cpu = sum(proc.cpu_times()[:2]) - cpu0
        stop.set()
        await probe
        return wall, cpu, counters.events - events0

    ticks = 0
    if mode == "producer":
        wall, cpu, events = await timed()
    else:
        app = EloLedgerApp(source=source)
        async with app.run_test(size=(120, 40)):
            view = app.run_view
            if mode == "baseline":
                # The baseline updates per token instead of on the timer (the timer keeps the
                # lists; only the numbers move to per-event updates).
                view.summary_text(source)
            wall, cpu, events = await timed()
            ticks = view.ticks
    lags.sort()
    p99 = lags[int(0.99 * (len(lags) - 1))] if lags else float("nan")
    return Result(
        name,
        wall,
        events,
        100 * cpu / wall,
        statistics.median(lags) if lags else float("nan"),
        p99,
        ticks,
    )


async def main_async(seconds: float, rate: float) -> list[Result]:
    return [
        await measure("producer (no app)", seconds, rate, "producer"),
        await measure("eloledger (10 Hz pull)", seconds, rate, "eloledger"),
        await measure("baseline (update per token)", seconds, rate, "baseline"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=20_000.0, help="token events/s in total")
    args = parser.parse_args()
    results = asyncio.run(main_async(args.seconds, args.rate))
    producer = results[0]
    print(
        f"{STREAMS} streams, target {args.rate:,.0f} token events/s, {args.seconds:g} s per run, "
        f"{psutil.cpu_count()} cores, load avg {psutil.getloadavg()[0]:.2f}"
    )
    header = (
        f"{'run':<30} {'events/s':>9} {'CPU %':>7} {'app CPU %':>9} "
        f"{'lag p50 ms':>10} {'lag p99 ms':>10}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        app_cpu = r.cpu_pct - producer.cpu_pct if r is not producer else float("nan")
        print(
            f"{r.name:<30} {r.events / r.seconds:>9,.0f} {r.cpu_pct:>7.1f} {app_cpu:>9.1f} "
            f"{r.lag_p50_ms:>10.2f} {r.lag_p99_ms:>10.2f}"
        )
    ours, base = results[1], results[2]
    ours_app = ours.cpu_pct - producer.cpu_pct
    base_app = base.cpu_pct - producer.cpu_pct
    print()
    print(
        f"app CPU, baseline / eloledger: {base_app / max(ours_app, 0.1):.1f}x   "
        f"p99 lag, baseline / eloledger: {base.lag_p99_ms / max(ours.lag_p99_ms, 0.01):.1f}x"
    )
    ok = ours_app < 40 and ours.lag_p99_ms < 20
    print(
        f"goal (app CPU < 40% of one core, p99 lag < 20 ms): {'MET' if ok else 'NOT MET'} "
        f"(app CPU {ours_app:.1f}%, p99 {ours.lag_p99_ms:.2f} ms, {ours.ticks} view ticks)"
    )


if __name__ == "__main__":
    main()
