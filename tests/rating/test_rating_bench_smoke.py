"""The rating benchmarks run end to end at a tiny size (they are not timed here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("script", "args", "expect"),
    [
        (
            "bench_bt.py",
            ["--players", "30", "--comparisons", "3000", "--repeat", "1"],
            "max |ΔElo| between the estimates: 0.0",
        ),
        (
            "bench_bootstrap.py",
            [
                "--arms",
                "6",
                "--comparisons",
                "3000",
                "--tasks",
                "60",
                "--rounds",
                "40",
                "--baseline-rounds",
                "4",
            ],
            "ratio eloledger/baseline",
        ),
        (
            "bench_intervals.py",
            [
                "--players",
                "30",
                "--comparisons",
                "3000",
                "--repeat",
                "1",
                "--corr-arms",
                "6",
                "--corr-comparisons",
                "3000",
                "--corr-tasks",
                "60",
            ],  # fmt: skip
            "half-width sandwich/bootstrap: min",
        ),
    ],
)
def test_bench_runs(script: str, args: list[str], expect: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert expect in done.stdout


def test_make_example_is_deterministic(tmp_path: Path) -> None:
    for out in ("a", "b"):
        done = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "make_example.py"), str(tmp_path / out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    for name in ("comparisons.csv", "ledger.jsonl"):
        made = (tmp_path / "a" / name).read_bytes()
        assert made == (tmp_path / "b" / name).read_bytes()
        assert made == (ROOT / "src" / "eloledger" / "data" / "examples" / name).read_bytes()
