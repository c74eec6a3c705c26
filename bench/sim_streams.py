"""Simulator CPU per token event at concurrency 64: batched ticks vs one write per token.

Both variants run the same SimServer code in a child process (so its CPU time is measured
alone, with psutil) and serve the same requests, at the same simulated latency, to a cheap
raw-socket client that reads the chunked SSE bodies to the end. The baseline is the naive
design: one timer and one socket write per token (``min_tick = 0``); eloledger's design
wakes each stream at most every ``MIN_TICK`` seconds and writes all tokens due in one go.

    .venv/bin/python bench/sim_streams.py [--requests 192] [--concurrency 64] [--speed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

import psutil

SERVER = """
import asyncio, sys
from eloledger.sim import SimServer

async def main(min_tick, speed):
    server = SimServer(speed=speed, seed=1)
    server.min_tick = min_tick
    await server.start()
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    print(server.stats.completion_tokens, flush=True)
    await server.stop()

asyncio.run(main(float(sys.argv[1]), float(sys.argv[2])))
"""


async def _one(port: int, prompt: str, api: str) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if api == "chat":
        path = "/v1/chat/completions"
        body = {
            "model": "sim-small",
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    else:
        path = "/v1/messages"
        body = {
            "model": "sim-small",
            "max_tokens": 2000,
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
        }
    data = json.dumps(body).encode()
    writer.write(
        f"POST {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\n"
        f"content-type: application/json\r\ncontent-length: {len(data)}\r\n"
        f"connection: close\r\n\r\n".encode()
        + data
    )
    received = 0
    while True:
        block = await reader.read(65536)
        if not block:
            break
        received += len(block)
    writer.close()
    return received


async def _drive(port: int, prompts: list[str], concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def run(i: int) -> int:
        async with gate:
            return await _one(port, prompts[i % len(prompts)], "chat" if i % 4 else "messages")

    start = time.perf_counter()
    sizes = await asyncio.gather(*(run(i) for i in range(len(prompts))))
    assert min(sizes) > 500, "a stream came back empty"
    return time.perf_counter() - start


def measure(min_tick: float, prompts: list[str], concurrency: int, speed: float) -> dict:
    child = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(min_tick), str(speed)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(child.stdout.readline())
        proc = psutil.Process(child.pid)
        cpu0 = proc.cpu_times()
        wall = asyncio.run(_drive(port, prompts, concurrency))
        cpu1 = proc.cpu_times()
        child.stdin.write("\n")
        child.stdin.flush()
        tokens = int(child.stdout.readline())
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "tokens": tokens,
        "cpu_ms_per_1k": 1000 * cpu / tokens * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=192)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--speed", type=float, default=1.0)
    args = parser.parse_args(argv)
    from eloledger.sim.server import MIN_TICK
    from eloledger.tasks import load_tasks

    tasks = load_tasks("builtin:all")
    prompts = [tasks[i % len(tasks)].prompt for i in range(args.requests)]
    print(
        f"{args.requests} streams, concurrency {args.concurrency}, speed {args.speed:g} "
        f"(sim-small: ~12 ms/token at speed 1)"
    )
    base = measure(0.0, prompts, args.concurrency, args.speed)
    ours = measure(MIN_TICK, prompts, args.concurrency, args.speed)
    header = f"{'variant':<34}{'wall s':>8}{'tokens':>9}{'tok/s':>9}{'server CPU s':>14}{'CPU ms/1k tok':>15}"
    print(header)
    for name, r in (
        ("baseline: one write per token", base),
        (f"eloledger: ticks of {MIN_TICK * 1000:g} ms", ours),
    ):
        print(
            f"{name:<34}{r['wall_s']:>8.2f}{r['tokens']:>9}{r['tokens'] / r['wall_s']:>9.0f}"
            f"{r['cpu_s']:>14.2f}{r['cpu_ms_per_1k']:>15.1f}"
        )
    if ours["cpu_ms_per_1k"] > 0:
        cpu_ratio = f"{base['cpu_ms_per_1k'] / ours['cpu_ms_per_1k']:.2f}x"
    else:  # a tiny run can finish inside one tick of the CPU clock
        cpu_ratio = "n/a (run too short to measure CPU; use more --requests)"
    print(
        f"server CPU per token: baseline / eloledger = {cpu_ratio}; "
        f"wall time ratio = {base['wall_s'] / ours['wall_s']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
