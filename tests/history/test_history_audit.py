"""The run index (`history`) and the direction audit (`audit`) show a planted
cost drift: tokens per task rise while the n=1 pass rate does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.ledger import LedgerWriter

WEEK = 7 * 86400
START = 1795000000.0  # 2026-11-18


def _ledger(path: Path, run: str, when: float, completion: int, solved: int) -> Path:
    with LedgerWriter(path) as writer:
        for t in range(10):
            for arm, n in (("base_1", 1), ("bo4", 4)):
                for s in range(n):
                    writer.append({
                        "run_id": run, "task_id": f"t{t}", "arm": arm, "session": "0",
                        "sample": s, "role": "sample", "prompt_tokens": 100,
                        "completion_tokens": completion, "latency_ms": 500.0,
                        "passed": t < solved, "ts": when + t, "attempt": 2 if t == 0 else 1,
                    })  # fmt: skip
    return path


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    plan = [("r1", 100, 6), ("r2", 110, 7), ("r3", 300, 7)]  # week 3: 3x output, same pass
    for k, (run, completion, solved) in enumerate(plan):
        ledger = _ledger(tmp_path / f"{run}.jsonl", run, START + k * WEEK, completion, solved)
        assert main(["history", "--add", str(ledger), "--format", "json"]) == 0
    return tmp_path / "data" / "eloledger" / "runs.jsonl"


def test_history_lists_the_runs(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["history", "--where"]) == 0
    assert capsys.readouterr().out.strip() == str(index)
    assert main(["history", "--format", "json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["run_id"] for r in runs] == ["r1", "r2", "r3"]
    r1 = runs[0]
    assert r1["arms"]["base_1"]["pass_at_1"] == 0.6 and r1["arms"]["base_1"]["tokens"] == 2000
    assert r1["arms"]["bo4"]["samples_per_session"] == 4
    assert r1["arms"]["base_1"]["latency_p95_ms"] == 500.0 and r1["arms"]["base_1"]["retries"] == 1
    assert len(r1["ledger_sha256"]) == 1 and r1["task_set_sha256"]
    assert main(["history"]) == 0
    assert "r3" in capsys.readouterr().out


def test_audit_flags_the_planted_cost_drift(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["audit", "--format", "json"]) == 0
    periods = json.loads(capsys.readouterr().out)["periods"]
    assert len(periods) == 3
    assert [p["cost_drift"] for p in periods] == [False, False, True]
    assert periods[1]["pass_at_1_n1"] == 0.7 and periods[2]["pass_at_1_n1"] == 0.7
    assert periods[0]["bestofn_share"] == 0.5 and periods[0]["retries"] == 1 + 4  # t0 retried
    assert periods[2]["mean_output_tokens"] == 300
    assert main(["audit", "--by", "run"]) == 0
    out = capsys.readouterr().out
    assert "COST DRIFT" in out and out.count("COST DRIFT") == 1
    assert main(["audit", "--since", "2026-12-01", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["periods"]) == 1  # only week 3 (r3)


def test_bad_index_line_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    (tmp_path / "eloledger").mkdir()
    (tmp_path / "eloledger" / "runs.jsonl").write_text("{oops\n")
    assert main(["audit"]) == 2
    assert "runs.jsonl:1" in capsys.readouterr().err
