"""Start and stop a real gateway process for the end-to-end tests (LiteLLM, claude-code-router).

Both e2e modules wait for the gateway to answer on loopback, fail with the tail of its log when
it dies or never answers, and stop it (terminate, then kill) however the test ends.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest


def wait_until_up(
    process: subprocess.Popen, ready: Callable[[], bool], log: Path, what: str, seconds: float
) -> None:
    """Poll ``ready`` until it says yes; fail with the log's tail if the process dies first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if ready():
                return
        except httpx2.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{what} did not start: " + log.read_text(errors="replace")[-2000:])
        time.sleep(0.5)


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
