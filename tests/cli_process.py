"""Run the real CLI in a child process (``python -m eloledger ...``) for the ledger tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def eloledger(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Exit status and text output of ``eloledger ARGS``; a hang fails with TimeoutExpired."""
    return subprocess.run(
        [sys.executable, "-m", "eloledger", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": SRC},
    )
