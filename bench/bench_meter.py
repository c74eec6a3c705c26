"""The meter's cost per model call, against today's direct path, side by side in one run.

Baseline (named "direct"): a client posts straight to the gateway (the embedded simulator in
its own process, ``eloledger sim --speed 1000``), as agent CLIs did before the meter.
Candidate ("metered"): the same client posts to the relay (:mod:`eloledger.meter.relay`, its
own process, as inside a sandbox), which hands the connection to the meter
(:class:`eloledger.meter.Meter`, its own process here, as eloledger's on the host), which
forwards to the same gateway with the real key and reads usage off the answer. Calls alternate
in blocks (non-streamed and streamed Anthropic messages), so machine noise hits both paths.

The relay hands its listening socket to the meter and execs the CLI (here ``sleep``), so its
CPU per call is expected to be zero; it is measured anyway.

``--floor`` adds two more paths to the same rounds, to say how much of the meter's cost is
metering and how much is being a process in the middle at all: "forwarder"
(``bench/meter_floor.py``: a Python byte pipe, no parsing, no usage, no row) and, when
``socat`` is installed, "socat" (the same pipe in C).

Reported per round (``--rounds``, default 2: measured twice): latency p50/p90 of each path and
the difference (target: at most 5 ms per call at p50); the CPU per call of the meter's process
and of the relay's process, each read from /proc over the metered blocks (less their idle CPU
over the direct blocks), and what their sum is at 20 calls/s as a share of one core (target:
at most 2 %). The client's own CPU per call on each path is printed for scale.

    .venv/bin/python bench/bench_meter.py                # 200 calls per path, twice
    .venv/bin/python bench/bench_meter.py --calls 400 --rounds 3
    .venv/bin/python bench/bench_meter.py --floor         # and a bare Python pipe, and socat
    BENCH_METER_PY="-m cProfile -o meter.prof" .venv/bin/python bench/bench_meter.py  # profile it
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
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
FLOOR = Path(__file__).with_name("meter_floor.py")


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
    """CPU seconds of one process and its children, all their threads, user and kernel (the
    scheduler's own nanosecond count, /proc/PID/task/*/schedstat: /proc/PID/stat counts in
    10 ms ticks). Children count for socat, which forks one per connection."""
    total = 0
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread that ended
            total += int((task / "schedstat").read_text().split()[0])
            children += [int(c) for c in (task / "children").read_text().split()]
    return total / 1e9 + sum(_proc_cpu(child) for child in children)


async def _serve_meter(sim_url: str) -> None:
    """The meter's process: one session, its socket and token on stdout, until stdin ends;
    then the number of calls it recorded with the gateway's usage."""
    meter = Meter(timeout_s=60)
    session = await meter.open(Upstream(sim_url, KEY))
    print(json.dumps({"socket": str(session.socket_path), "token": session.token}), flush=True)
    loop = asyncio.get_running_loop()
    closed = loop.create_future()  # stdin's end, watched by the loop: a thread would cost
    loop.add_reader(0, lambda: os.read(0, 4096) or closed.done() or closed.set_result(None))
    await closed
    loop.remove_reader(0)
    counted = sum(1 for call in session.calls if call.usage is not None)
    await meter.aclose()
    print(json.dumps({"calls": len(session.calls), "counted": counted}), flush=True)


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


async def _round(
    client: httpx2.AsyncClient, urls: dict[str, tuple[str, str]], pids: dict[str, int],
    calls: int, block: int,
) -> tuple[dict[str, list[float]], dict[str, dict[str, float]]]:
    """Latencies per path, and CPU seconds per path of the client and of each process."""
    lat: dict[str, list[float]] = {p: [] for p in urls}
    cpu = {p: {"client": 0.0, **{name: 0.0 for name in pids}} for p in urls}
    done = 0
    while done < calls:
        n = min(block, calls - done)
        for path, (url, key) in urls.items():
            c0 = time.process_time()
            p0 = {name: _proc_cpu(pid) for name, pid in pids.items()}
            lat[path] += await _block(client, url, key, n)
            cpu[path]["client"] += time.process_time() - c0
            for name, pid in pids.items():
                cpu[path][name] += _proc_cpu(pid) - p0[name]
        done += n
    return lat, cpu


def _report(n: int, calls: int, lat: dict[str, list[float]], cpu: dict[str, dict[str, float]]) -> None:
    p50 = {k: statistics.median(v) for k, v in lat.items()}
    p90 = {k: statistics.quantiles(v, n=10)[-1] for k, v in lat.items()}
    per = {p: {k: v / calls * 1000.0 for k, v in c.items()} for p, c in cpu.items()}

    def cost(path: str, name: str) -> float:  # a process's CPU on its path, less its idle CPU
        return per[path][name] - per["direct"][name]

    meter_ms, relay_ms = cost("metered", "meter"), cost("metered", "relay")
    total = meter_ms + relay_ms
    share = total * 20 / 1000.0 * 100.0
    added = p50["metered"] - p50["direct"]
    print(f"round {n}: {calls} calls per path")
    print(f"  {'path':<9} {'p50 ms':>8} {'p90 ms':>8} {'client CPU ms/call':>19}")
    for path in lat:
        print(f"  {path:<9} {p50[path]:>8.2f} {p90[path]:>8.2f} {per[path]['client']:>19.3f}")
    print(f"  added latency p50: {added:.2f} ms (target <= 5 ms; metered/direct "
          f"{p50['metered'] / p50['direct']:.2f}x)")  # fmt: skip
    print(f"  CPU per call: meter {meter_ms:.3f} ms + relay {relay_ms:.3f} ms = {total:.3f} ms "
          f"({total / per['direct']['client']:.2f}x the direct client's own)")  # fmt: skip
    print(f"  at 20 calls/s: {share:.2f} % of one core (target <= 2 %; {share / 2.0:.2f}x the target)")
    for floor in ("forwarder", "socat"):
        if floor in lat:
            ms = cost(floor, floor)
            print(f"  {floor + ':':<10} {ms:.3f} ms per call, {ms * 2:.2f} % of a core at 20 calls/s; "
                  f"the meter is {total / ms:.2f}x it")  # fmt: skip


def _start_floors(sim_port: int, procs: list[subprocess.Popen[bytes]]) -> dict[str, tuple[int, int]]:
    """The forwarder, and socat when installed: name -> (port, pid)."""
    floors = {}
    commands = {"forwarder": lambda port: [sys.executable, str(FLOOR), str(port), str(sim_port)]}
    if shutil.which("socat"):
        commands["socat"] = lambda port: [
            "socat", f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,nodelay",
            f"TCP:127.0.0.1:{sim_port},nodelay",
        ]  # fmt: skip
    for name, command in commands.items():
        port = _free_port()
        procs.append(subprocess.Popen(command(port), stderr=subprocess.DEVNULL))
        _wait_port(port)
        floors[name] = (port, procs[-1].pid)
    return floors


async def main(calls: int, block: int, rounds: int, floor: bool) -> None:
    sim_port, relay_port = _free_port(), _free_port()
    sim_url = f"http://127.0.0.1:{sim_port}"
    sim = subprocess.Popen(
        [sys.executable, "-m", "eloledger", "sim", "--port", str(sim_port), "--speed", "1000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    procs: list[subprocess.Popen[bytes]] = [sim]
    try:
        _wait_port(sim_port)
        meter = subprocess.Popen(
            [sys.executable, *os.environ.get("BENCH_METER_PY", "").split(), __file__, "--serve", sim_url], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )  # fmt: skip
        procs.append(meter)
        assert meter.stdout is not None and meter.stdin is not None
        info = json.loads(meter.stdout.readline())
        relay = subprocess.Popen(
            [sys.executable, "-I", "-S", str(RELAY), info["socket"], str(relay_port),
             "--", "sleep", "3600"],
            stdout=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        procs.append(relay)
        _wait_port(relay_port)
        urls = {"direct": (sim_url, KEY), "metered": (f"http://127.0.0.1:{relay_port}", info["token"])}
        pids = {"meter": meter.pid, "relay": relay.pid}
        for name, (port, pid) in (_start_floors(sim_port, procs) if floor else {}).items():
            urls[name], pids[name] = (f"http://127.0.0.1:{port}", KEY), pid
        print(f"half streamed, blocks of {block}, alternating {'/'.join(urls)}")
        async with httpx2.AsyncClient(timeout=30) as client:
            for path in urls:  # warm every path up
                await _block(client, *urls[path], 10)
            for n in range(1, rounds + 1):
                _report(n, calls, *await _round(client, urls, pids, calls, block))
        meter.stdin.close()
        tally = json.loads(meter.stdout.readline())
        meter.wait(30)
        expected = calls * rounds + 10
        assert tally == {"calls": expected, "counted": expected}, tally
    finally:
        for proc in reversed(procs):
            if proc.args[:3] == [sys.executable, "-I", "-S"]:
                os.killpg(proc.pid, signal.SIGKILL)  # the relay and its child
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--floor", action="store_true",
                        help="also a bare Python byte pipe and socat (if installed) on the same rounds")
    parser.add_argument("--serve", metavar="GATEWAY_URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve_meter(args.serve))
    else:
        asyncio.run(main(args.calls, args.block, args.rounds, args.floor))
