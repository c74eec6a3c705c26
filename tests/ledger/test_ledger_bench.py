"""Smoke test: the ledger benchmark runs on a small file and finds identical sums."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_ledger.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_bench_ledger_small() -> None:
    done = _bench("--rows", "3000", "--no-json-loop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sums identical: True" in done.stdout
    assert "jq | awk" in done.stdout


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_bench_guide_rows_against_duckdb_small() -> None:
    done = _bench("--guide", "--rows", "3000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sums identical: True" in done.stdout and "duckdb" in done.stdout


def test_bench_colliding_ids_small() -> None:
    done = _bench("--collide", "--rows", "300")
    assert "colliding / ordinary:" in done.stdout, done.stdout + done.stderr
