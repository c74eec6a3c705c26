"""End to end: a spec with train/val/test files, ``tuned_on`` and its own
``[gates]`` (naming the four arms) is a runnable experiment, not only a gate file.

Before, ``eloledger run`` refused such a spec (``unknown table [gates]``), so a spec's gates and
``tuned_on`` could only be tried on hand-made ledgers. Here real runs on the embedded simulator
write ``split`` on every row; ``fairness --gates SPEC`` (no arm flags) reads the spec's arms,
gates and ``tuned_on``, and says TUNED-ON SPLIT loudly on the tuned split only; the run index
records the same verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_history_run_index import ARMS, GATES  # the four arms and their [gates] arms

from eloledger import history
from eloledger.tasks.registry import load_tasks

SRC = str(Path(__file__).resolve().parents[2] / "src")
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", *args],
        capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip


def _spec(folder: Path, split: str) -> Path:
    tasks = load_tasks("builtin:arith")
    for name, part in (("val", tasks[0::2][:10]), ("test", tasks[1::2][:10])):
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps({"task_id": t.task_id, "prompt": t.prompt, "answer": t.answer}) + "\n" for t in part)  # fmt: skip
        )
    spec = folder / f"{split}.toml"
    spec.write_text(
        f'[experiment]\nname = "{split}"\nprofile = "sim"\nmodel = "sim-small"\nconcurrency = 8\n'
        f'\n[tasks]\nval = "val.jsonl"\ntest = "test.jsonl"\nsplit = "{split}"\ntuned_on = "val"\n'
        f'\n[sim]\nspeed = 50.0\n{ARMS}{GATES}'
    )  # fmt: skip
    return spec


@pytest.mark.parametrize("split", ["val", "test"])
def test_a_spec_with_gates_runs_and_its_verdict_knows_the_tuned_split(
    tmp_path: Path, split: str
) -> None:
    spec = _spec(tmp_path, split)
    ledger = tmp_path / f"{split}.ledger.jsonl"
    done = _cli("run", str(spec), "--headless", "--quiet", "--bootstrap", "0",
                "--ledger", str(ledger))  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert {r["split"] for r in rows} == {split}
    fair = _cli("fairness", str(ledger), "--gates", str(spec), "--format", "json")
    assert fair.returncode in (0, 1), fair.stderr  # the arms came from [gates] arms
    record = json.loads(fair.stdout)
    assert record["candidate_id"] == "cot_1" and record["baseline_id"] == "base_1"
    assert [g["gate"] for g in record["gates"]] == ["max_latency_growth_ratio", "max_regressions"]
    tuned = split == "val"
    assert ("TUNED-ON SPLIT" in record.get("tuned_on_warning", "")) is tuned
    assert record["reason"].startswith("[on the tuned-on split 'val']") is tuned
    (entry,) = history.read_index()
    (verdict,) = [v for v in entry["verdicts"] if v["kind"] == "fairness"]
    assert verdict["verdict"] == record["verdict"] and verdict["reason"] == record["reason"]
    assert verdict["gates_pass"] is (fair.returncode == 0)


def test_bad_gates_in_a_spec_fail_the_run_before_a_call(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "test")
    spec.write_text(spec.read_text().replace("max_regressions = 0", "max_regressions = -1"))
    done = _cli("run", str(spec), "--headless", "--quiet", "--ledger", str(tmp_path / "x.jsonl"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "gates.max_regressions: must be a whole number >= 0" in done.stderr
    assert not (tmp_path / "x.jsonl").exists() and not history.index_path().exists()
