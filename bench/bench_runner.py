"""Runner throughput vs a one-request-at-a-time loop, at the same simulated latency.

Baseline (named): the loop the popular guides' runners use: the synchronous ``openai`` client,
one streamed chat completion after another. Candidate: ``eloledger``'s async runner
(``run_experiment``) at concurrency 1, 4, 16 and 64. Both talk to the same simulator, run in a
*separate process* so that its CPU is not counted as the runner's. Reported per level: calls/s,
speed-up over the loop, speed-up / concurrency (goal >= 0.8 up to 64) and the runner's CPU time
per call (this process's CPU time / calls: SDK parsing, ledger writes, judging, counters).

    .venv/bin/python bench/bench_runner.py                 # full run (about a minute)
    .venv/bin/python bench/bench_runner.py --levels 1,4 --baseline-calls 4 --speed 20   # smoke
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

SIM_SCRIPT = """
import asyncio, sys
from eloledger.sim import SimServer
async def main():
    server = SimServer(port=0, speed=float(sys.argv[1]), seed=1)
    await server.start()
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.stop()
asyncio.run(main())
"""

SPEC = """\
[experiment]
name = "bench-c{c}"
profile = "bench"
model = "sim-small"
concurrency = {c}
timeout_s = 300

[tasks]
source = "builtin:arith"
limit = {limit}

[[arms]]
name = "arm"
kind = "{kind}"
{n}
max_tokens = {max_tokens}
"""


def start_sim(speed: float) -> tuple[subprocess.Popen, int]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [sys.executable, "-c", SIM_SCRIPT, str(speed)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    port = int(proc.stdout.readline())
    return proc, port


def baseline(base_url: str, prompts: list[str], max_tokens: int) -> tuple[float, float]:
    """The one-at-a-time loop; returns (seconds, process CPU seconds)."""
    import openai

    client = openai.OpenAI(base_url=base_url + "/v1", api_key="bench", max_retries=0)
    cpu0, t0 = time.process_time(), time.perf_counter()
    for prompt in prompts:
        stream = client.chat.completions.create(
            model="sim-small",
            messages=[{"role": "user", "content": prompt}],
            max_tokens=max_tokens,
            temperature=0.7,
            stream=True,
            stream_options={"include_usage": True},
        )
        text = []
        for chunk in stream:
            for choice in chunk.choices:
                if choice.delta and choice.delta.content:
                    text.append(choice.delta.content)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    client.close()
    return elapsed, cpu


def runner_level(
    folder: Path, c: int, calls: int, max_tokens: int, tag: str = ""
) -> tuple[int, float, float, float]:
    from eloledger.runner.run import run_experiment
    from eloledger.runner.spec import parse_spec

    # n samples on `limit` tasks with n * limit == calls exactly (46 built-in tasks).
    n = next(k for k in range(1, calls + 1) if calls % k == 0 and calls // k <= 46)
    limit = calls // n
    kind, nline = ("single", "") if n == 1 else ("best_of_n", f"n = {n}")
    text = SPEC.format(c=c, limit=limit, kind=kind, n=nline, max_tokens=max_tokens)
    spec = parse_spec(text, path=folder / f"c{c}.toml", ledger=folder / f"c{c}{tag}.ledger.jsonl")
    cpu0, t0 = time.process_time(), time.perf_counter()
    result = asyncio.run(run_experiment(spec))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    ok = sum(a["ok"] for a in result.arms)
    if ok != result.attempts:
        print(f"  warning: {result.attempts - ok} calls failed at concurrency {c}", file=sys.stderr)
    rows = [orjson.loads(line) for line in spec.ledger.read_bytes().splitlines()]
    latency = sum(r["latency_ms"] for r in rows) / len(rows)
    return result.attempts, elapsed, cpu, latency


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,4,16,64", help="concurrency levels")
    parser.add_argument("--speed", type=float, default=1.0, help="sim speed (1 = realistic)")
    parser.add_argument("--max-tokens", type=int, default=64, help="completion cap per call")
    parser.add_argument("--baseline-calls", type=int, default=8, help="calls in the loop")
    parser.add_argument("--rounds", type=int, default=8, help="calls per slot at each level")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    folder = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    os.environ["XDG_CONFIG_HOME"] = str(folder / "config")  # a throwaway profile store
    os.environ["HOME"] = str(folder)
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    from eloledger.profiles.model import Profile
    from eloledger.profiles.store import save_profile
    from eloledger.tasks import load_tasks

    sim, port = start_sim(args.speed)
    try:
        base = f"http://127.0.0.1:{port}"
        save_profile(Profile(name="bench", base_url=base))
        prompts = [t.prompt for t in load_tasks("builtin:arith")][: args.baseline_calls]
        baseline(base, prompts[:1], args.max_tokens)  # warm-up: imports, first connection
        runner_level(folder, 1, 1, args.max_tokens, tag="-warmup")
        b_time, b_cpu = baseline(base, prompts, args.max_tokens)
        b_rate = len(prompts) / b_time
        print(
            f"baseline (sync openai loop, one call at a time): {len(prompts)} calls in "
            f"{b_time:.2f}s, mean latency {1000 * b_time / len(prompts):.0f} ms; "
            f"{b_rate:.2f} calls/s, {1000 * b_cpu / len(prompts):.1f} ms CPU/call "
            f"(sim speed {args.speed:g}, max_tokens {args.max_tokens})"
        )
        print(f"{'conc':>5} {'calls':>6} {'wall s':>7} {'calls/s':>8} {'speed-up':>9} "
              f"{'/conc':>6} {'CPU ms/call':>12} {'mean latency ms':>16}")  # fmt: skip
        for c in levels:
            calls, elapsed, cpu, latency = runner_level(
                folder, c, max(args.rounds * c, 4), args.max_tokens
            )
            rate = calls / elapsed
            speedup = rate / b_rate
            print(f"{c:>5} {calls:>6} {elapsed:>7.2f} {rate:>8.2f} {speedup:>8.1f}x "
                  f"{speedup / c:>6.2f} {1000 * cpu / calls:>12.1f} {latency:>16.0f}", flush=True)  # fmt: skip
    finally:
        sim.stdin.close()
        sim.wait(10)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
