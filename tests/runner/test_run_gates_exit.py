"""A run whose spec's ``[gates]`` fail exits 1 and names each failed gate on stderr.

The guide's workflow is "run, and let CI stop on a failed gate": a spec's ``[gates]`` that only
``history`` reported let a failing candidate through ``eloledger run`` with exit 0. Real runs on
the embedded simulator, the guide's four-arm design (candidate and baseline at n = 1 and n = 4).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_history_run_index import ARMS  # the guide's four arms: base/cot at n = 1 and 4

SRC = str(Path(__file__).resolve().parents[2] / "src")
SPEC = (
    '[experiment]\nname = "gated"\nprofile = "sim"\nmodel = "sim-small"\nconcurrency = 8\n\n'
    '[tasks]\nsource = "builtin:arith"\nlimit = 6\n\n[sim]\nspeed = 50.0\n'
    + ARMS.replace("{", "{{").replace("}", "}}")
    + """
[gates]
arms = {{old_1 = "base_1", new_1 = "cot_1", old_n = "base_4", new_n = "cot_4"}}
bootstrap_rounds = 50
max_token_growth_ratio = {tokens}
max_latency_growth_ratio = {latency}
"""
)


def _run(folder: Path, tokens: float, latency: float) -> subprocess.CompletedProcess:
    spec = folder / "spec.toml"
    spec.write_text(SPEC.format(tokens=tokens, latency=latency))
    return subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--ledger", str(folder / "l.jsonl")],
        capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip


def test_failing_gates_exit_1_and_each_is_named_on_its_own_line(tmp_path: Path) -> None:
    done = _run(tmp_path, tokens=0.001, latency=0.0001)  # no candidate can pass these
    assert done.returncode == 1, done.stderr
    failed = [line for line in done.stderr.splitlines() if "GATE FAILED" in line]
    assert len(failed) == 2, done.stderr
    assert failed[0].startswith("eloledger: GATE FAILED: max_token_growth_ratio = ")
    assert "must be <= 0.001 (cot_1 vs base_1" in failed[0]
    assert failed[1].startswith("eloledger: GATE FAILED: max_latency_growth_ratio = ")
    assert "gates pass" not in done.stderr
    assert "Elo" in done.stdout  # the run's own table is still printed


def test_passing_gates_print_one_line_and_exit_0(tmp_path: Path) -> None:
    done = _run(tmp_path, tokens=1000, latency=1000)
    assert done.returncode == 0, done.stderr
    passed = [line for line in done.stderr.splitlines() if "gates pass" in line]
    assert passed == [
        "eloledger: gates pass (cot_1 vs base_1): max_token_growth_ratio, max_latency_growth_ratio"
    ], done.stderr
    assert "GATE FAILED" not in done.stderr
