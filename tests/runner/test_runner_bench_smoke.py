"""The runner benchmark script runs end to end at a tiny size (figures come from a full run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_runner_smoke() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_runner.py"),
            "--levels",
            "1,4",
            "--speed",
            "50",
            "--baseline-calls",
            "2",
            "--rounds",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("baseline")
    assert [line.split()[0] for line in lines[2:]] == ["1", "4"]
    assert all("x" in line.split()[4] for line in lines[2:])
