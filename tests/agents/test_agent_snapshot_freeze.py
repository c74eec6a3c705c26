"""An agent's processes are held still while a snapshot is copied, and go on after it.

A stand-in agent forks a child that double-forks into its own session (the way a tool leaves
a process behind); each of the three appends to its own file every millisecond. Inside
``frozen(pid)`` no file grows; after it, every one grows again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eloledger.runner.freeze import frozen

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc")

AGENT = r"""
import os, sys, time
def tick(name):
    with open(name, "a") as fh:
        while True:
            fh.write("x"); fh.flush(); time.sleep(0.001)
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        tick("grandchild")
    tick("child")
tick("agent")
"""
NAMES = ("agent", "child", "grandchild")


def _sizes(folder: Path) -> list[int]:
    return [(folder / n).stat().st_size if (folder / n).exists() else 0 for n in NAMES]


def test_frozen_holds_every_process_of_the_agent_and_lets_them_go(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", AGENT], cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not all(_sizes(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert all(_sizes(tmp_path)), "the stand-in agent did not start"
        with frozen(proc.pid) as held:
            assert held == 3
            before = _sizes(tmp_path)
            time.sleep(0.3)
            assert _sizes(tmp_path) == before  # nobody wrote while held
        time.sleep(0.3)
        after = _sizes(tmp_path)
        assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)
    finally:
        for pid in _family(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait()


def _family(root: int) -> list[int]:
    from eloledger.runner.freeze import _tree

    return _tree(root)


def test_nothing_to_hold_when_the_agent_is_gone() -> None:
    with frozen(None) as held:
        assert held == 0
