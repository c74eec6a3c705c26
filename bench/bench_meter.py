"""The meter's cost per model call, against today's direct path, side by side in one run.

Baseline (named "direct"): a client posts straight to the gateway (the embedded simulator in
its own process, ``eloledger sim --speed 1000``), as agent CLIs did before the meter.
Candidate ("metered"): the same client posts to the relay (:mod:`eloledger.meter.relay`, its
own process, as inside a sandbox) which forwards over the session's unix socket to the meter
(:class:`eloledger.meter.Meter`, in this process), which forwards to the same gateway with the
real key and reads usage off the answer. Calls alternate in blocks (non-streamed and streamed
Anthropic messages), so machine noise hits both paths alike.

Reported: latency p50/p90 of each path and the difference (target: at most 5 ms per call at
p50); the meter's CPU per call (this process's CPU over the metered blocks minus over the
direct ones, plus the relay process's CPU), and what that is at 20 calls/s as a share of one
core (target: at most 2 %).

    .venv/bin/python bench/bench_meter.py                # 200 calls per path
    .venv/bin/python bench/bench_meter.py --calls 400
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from eloledger.meter import RELAY, Meter, Upstream

KEY = "sk-bench-meter-key-0123456789"
BODY = {"model": "sim-small", "max_tokens": 64, "messages": [{"role": "user", "content": "2+2?"}]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _block(client: httpx2.AsyncClient, url: str, key: str, n: int) -> list[float]:
    out = []
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    for i in range(n):
        body = {**BODY, "stream": bool(i % 2)}
        t0 = time.perf_counter()
        async with client.stream("POST", url + "/v1/messages", json=body, headers=headers) as r:
            async for _ in r.aiter_bytes():
                pass
            assert r.status_code == 200, r.status_code
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


async def main(calls: int, block: int) -> None:
    sim_port, relay_port = _free_port(), _free_port()
    sim = subprocess.Popen(
        [sys.executable, "-m", "eloledger", "sim", "--port", str(sim_port), "--speed", "1000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    meter = Meter(timeout_s=60)
    relay = None
    try:
        _wait_port(sim_port)
        session = await meter.open(Upstream(f"http://127.0.0.1:{sim_port}", KEY))
        relay = subprocess.Popen(
            [sys.executable, "-I", "-S", str(RELAY), str(session.socket_path), str(relay_port),
             "--", "sleep", "3600"],
            stdout=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        _wait_port(relay_port)
        direct_url = f"http://127.0.0.1:{sim_port}"
        metered_url = f"http://127.0.0.1:{relay_port}"
        lat = {"direct": [], "metered": []}
        cpu = {"direct": 0.0, "metered": 0.0}
        relay_cpu = 0.0
        async with httpx2.AsyncClient(timeout=30) as client:
            await _block(client, direct_url, KEY, 10)  # warm both paths up
            await _block(client, metered_url, session.token, 10)
            session.calls.clear()
            done = 0
            while done < calls:
                n = min(block, calls - done)
                for name, url, key in (("direct", direct_url, KEY),
                                       ("metered", metered_url, session.token)):  # fmt: skip
                    c0, r0 = time.process_time(), _proc_cpu(relay.pid)
                    lat[name] += await _block(client, url, key, n)
                    cpu[name] += time.process_time() - c0
                    if name == "metered":
                        relay_cpu += _proc_cpu(relay.pid) - r0
                done += n
        assert len(session.calls) == calls and all(c.usage for c in session.calls)
    finally:
        await meter.aclose()
        for proc in (relay, sim):
            if proc is not None:
                if proc is relay:
                    os.killpg(proc.pid, signal.SIGKILL)  # the relay and its child
                proc.kill()
                proc.wait()
    p50 = {k: statistics.median(v) for k, v in lat.items()}
    p90 = {k: statistics.quantiles(v, n=10)[-1] for k, v in lat.items()}
    meter_cpu_ms = (cpu["metered"] - cpu["direct"]) / calls * 1000.0
    relay_cpu_ms = relay_cpu / calls * 1000.0
    per_call = meter_cpu_ms + relay_cpu_ms
    core_share = per_call * 20 / 1000.0 * 100.0
    print(f"{calls} calls per path (half streamed), blocks of {block}, alternating")
    print(f"{'path':<8} {'p50 ms':>8} {'p90 ms':>8}")
    for name in ("direct", "metered"):
        print(f"{name:<8} {p50[name]:>8.2f} {p90[name]:>8.2f}")
    added = p50["metered"] - p50["direct"]
    print(f"added latency p50: {added:.2f} ms (target <= 5 ms; ratio metered/direct "
          f"{p50['metered'] / p50['direct']:.2f}x)")  # fmt: skip
    print(f"CPU per call: meter {meter_cpu_ms:.3f} ms + relay {relay_cpu_ms:.3f} ms = "
          f"{per_call:.3f} ms (direct client alone: {cpu['direct'] / calls * 1000:.3f} ms)")
    print(f"at 20 calls/s: {core_share:.2f} % of one core (target <= 2 %; "
          f"ratio to target {core_share / 2.0:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--block", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.block))
