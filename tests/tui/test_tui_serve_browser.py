"""`eloledger serve` in a real headless Chromium: the app and `watch` drawn in a browser, and
no app process left behind, whether the browser leaves or the server stops (a process count
before and after). Slow (a browser and a served app start, ~15-30 s each on a loaded 2-core
machine): it is the only test of the served app's lifetime, which Pilot cannot see."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from browser_support import chromium, visit
from eloledger.ledger import LedgerWriter

pytest.importorskip("textual_serve")
pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium is not installed (scripts/install_browser.sh)"
)
SHOTS = os.environ.get("ELOLEDGER_SCREENSHOTS")  # a folder to keep the screenshots in


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(args: list[str], port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-m", "eloledger", "serve", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server
        assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
        time.sleep(0.2)


def apps(server: subprocess.Popen) -> list[psutil.Process]:
    """The app processes the server started (one per browser tab)."""
    try:
        return [p for p in psutil.Process(server.pid).children(recursive=True) if p.is_running()]
    except psutil.NoSuchProcess:
        return []


def gone(processes: list[psutil.Process], seconds: float = 20.0) -> list[psutil.Process]:
    """Those of ``processes`` still running after ``seconds``."""
    _, alive = psutil.wait_procs(processes, timeout=seconds)
    return alive


def a_ledger(folder: Path) -> Path:
    ledger = folder / "run.jsonl"
    with LedgerWriter(ledger) as writer:
        for i in range(40):
            writer.append({"task_id": f"t{i}", "arm": f"arm_{i % 3}", "status": "ok",
                           "total_tokens": 150, "latency_ms": 90.0})  # fmt: skip
    return ledger


def shot_path(tmp_path: Path, name: str) -> Path:
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


@pytest.mark.timeout(300)
def test_served_watch_is_drawn_and_its_app_ends_when_the_browser_leaves(tmp_path: Path) -> None:
    port = free_port()
    server = serve(["--watch", str(a_ledger(tmp_path))], port)
    try:
        assert apps(server) == []  # before: no app (one starts per browser tab)
        seen: list[psutil.Process] = []

        async def count() -> None:
            seen.extend(apps(server))

        shot = shot_path(tmp_path, "serve-watch-run.png")
        drawn = asyncio.run(visit(f"http://127.0.0.1:{port}/", shot, before_leaving=count))
        assert drawn, "the browser never showed the app"
        assert len(seen) == 1  # while connected: one app process
        assert gone(seen) == []  # after the browser left: none
        assert apps(server) == []
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.timeout(300)
def test_stopping_the_server_ends_every_app_it_started(tmp_path: Path) -> None:
    port = free_port()
    server = serve([], port)
    seen: list[psutil.Process] = []

    async def stop_server() -> None:
        seen.extend(apps(server))
        server.send_signal(signal.SIGTERM)  # while the browser is still connected
        await asyncio.sleep(0)

    try:
        shot = shot_path(tmp_path, "serve-app.png")
        drawn = asyncio.run(visit(f"http://127.0.0.1:{port}/", shot, before_leaving=stop_server))
        assert drawn
        assert len(seen) == 1
        assert server.wait(timeout=30) is not None
        assert gone(seen) == []  # not re-parented to init and left running
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)


def watchers(ledger: Path) -> set[int]:
    """Every `eloledger watch LEDGER` process on the machine, whoever its parent (one
    re-parented to init when its server stopped counts too)."""
    found = set()
    for process in psutil.process_iter(["cmdline"]):
        argv = process.info["cmdline"] or []
        if "watch" in argv and str(ledger) in argv and "serve" not in argv:
            found.add(process.pid)
    return found


@pytest.mark.timeout(300)
def test_one_shot_screenshot_visits_leave_no_app_running(tmp_path: Path) -> None:
    """`chromium --headless --screenshot` visits: the browser takes its picture and exits on
    its own, never leaving the page (the visits that used to leave every app they started
    rendering to nobody). Two visits in a row (each ~5 s, plus up to 6 s for the server's
    quit-then-SIGTERM grace), then the server stops: no app process is left at any point."""
    ledger = a_ledger(tmp_path)
    port = free_port()
    server = serve(["--watch", str(ledger)], port)
    try:
        assert watchers(ledger) == set()
        for n in range(2):
            shot = shot_path(tmp_path, f"serve-one-shot-{n}.png")
            browser = subprocess.Popen(
                [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                 f"--user-data-dir={tmp_path / f'profile-{n}'}", "--virtual-time-budget=8000",
                 "--window-size=1280,800", f"--screenshot={shot}",
                 f"http://127.0.0.1:{port}/"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            started: set[int] = set()
            while browser.poll() is None:  # the app the visit started, seen while it lasts
                started |= watchers(ledger)
                time.sleep(0.2)
            assert browser.returncode == 0 and shot.exists()
            assert len(started) == 1, f"visit {n}: {len(started)} app processes"
            assert gone([psutil.Process(pid) for pid in started if psutil.pid_exists(pid)]) == []
            assert watchers(ledger) == set(), f"visit {n} left an app running"
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert watchers(ledger) == set()  # and none after the server stopped
