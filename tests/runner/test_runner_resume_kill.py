"""A run killed with SIGKILL and resumed ends with exactly the rows of an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson

SPEC = """\
[experiment]
name = "killme"
profile = "sim"
concurrency = 6
seed = 3

[sim]
speed = 6

[tasks]
source = "builtin:arith"
limit = 8

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "four"
kind = "best_of_n"
n = 4

[[arms]]
name = "sc"
kind = "self_consistency"
k = 3
"""
TOTAL = 8 * (1 + 4 + 3)


def _run(spec: Path, ledger: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eloledger",
            "run",
            str(spec),
            "--headless",
            "--quiet",
            "--format",
            "json",
            "--bootstrap",
            "0",
            "--ledger",
            str(ledger),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines() if path.exists() else []


def _keys(path: Path) -> Counter:
    rows = [orjson.loads(line) for line in _lines(path)]
    return Counter(
        (r["task_id"], r["arm"], r["session"], r["sample"]) for r in rows if r["status"] == "ok"
    )


def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    killed = tmp_path / "killed.jsonl"
    whole = tmp_path / "whole.jsonl"

    reference = _run(spec, whole)  # the uninterrupted run, in parallel
    victim = _run(spec, killed)
    deadline = time.monotonic() + 60
    while len(_lines(killed)) < TOTAL // 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL
    done_before = len(_lines(killed))
    assert 0 < done_before < TOTAL, "the kill must land mid-run"

    resumed = _run(spec, killed, "--resume")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err.decode()
    reference.communicate(timeout=120)
    assert reference.returncode == 0

    got, want = _keys(killed), _keys(whole)
    assert set(got) == set(want) and len(got) == TOTAL
    assert max(got.values()) == 1, "an ok row was duplicated"
    payload = orjson.loads(out)
    assert payload["run"]["resumed_calls"] >= done_before - 1
    assert payload["run"]["calls_made"] + payload["run"]["resumed_calls"] == TOTAL
    # Sampling is seeded per (task, arm, session, sample), so the resumed run judged the very
    # same answers: identical comparisons, outcomes included.
    killed_comps = (tmp_path / "killed.comparisons.csv").read_text().splitlines()
    whole_comps = (tmp_path / "whole.comparisons.csv").read_text().splitlines()
    assert sorted(killed_comps) == sorted(whole_comps) and len(whole_comps) == 1 + 8 * 3
