"""The ledger views the guides use: per run, since a date, and a task x arm table.

"Run before and after, the difference is the budget": ``tokens --by run`` gives each run's
total, ``--since`` the calls from a date on, ``--by task,arm`` each task's tokens under each arm.
Rows in the guides' own names (case_id, strategy, request/response tokens, an ISO timestamp)
and a judge row with the guide's ``winner``/``opponent`` fields, which is no arm's cost.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main

ROWS = [
    {"experiment_id": "exp-1", "run_id": "before", "case_id": "c1", "strategy": "baseline",
     "request_tokens": 100, "response_tokens": 50, "timestamp": "2026-11-19T10:00:00Z"},
    {"experiment_id": "exp-1", "run_id": "after", "case_id": "c1", "strategy": "cot",
     "request_tokens": 100, "response_tokens": 90, "timestamp": "2026-11-21T10:00:00Z"},
    {"experiment_id": "exp-1", "run_id": "after", "case_id": "c2", "strategy": "cot",
     "request_tokens": 120, "response_tokens": 80, "timestamp": "2026-11-21T10:05:00Z"},
    {"experiment_id": "exp-1", "run_id": "after", "case_id": "c1", "role": "judge",
     "winner": "cot", "opponent": "baseline", "request_tokens": 300, "response_tokens": 5,
     "timestamp": "2026-11-21T10:06:00Z"},
]  # fmt: skip


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "exp-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def _json(capsys: pytest.CaptureFixture, *args: str) -> dict:
    assert main(["tokens", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_by_run(ledger: Path, capsys: pytest.CaptureFixture) -> None:
    data = _json(capsys, str(ledger), "--by", "run")
    totals = {g["name"]: g["total_tokens"] for g in data["groups"]}
    assert totals == {"before": 150, "after": 390}  # the judge's 305 is billed apart
    assert data["judge"]["total_tokens"] == 305


def test_since_a_date(ledger: Path, capsys: pytest.CaptureFixture) -> None:
    data = _json(capsys, str(ledger), "--since", "2026-11-20")
    assert {g["name"]: g["total_tokens"] for g in data["groups"]} == {"cot": 390}
    assert main(["tokens", str(ledger), "--since", "last week"]) == 2
    assert "--since 'last week'" in capsys.readouterr().err


def test_task_by_arm_table(ledger: Path, capsys: pytest.CaptureFixture) -> None:
    data = _json(capsys, str(ledger), "--by", "task,arm")
    assert data["arms"] == ["baseline", "cot"]
    assert data["tasks"] == {"c1": {"baseline": 150, "cot": 190}, "c2": {"cot": 200}}
    assert main(["tokens", str(ledger), "--by", "task,arm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["task", "baseline", "cot"]
    assert lines[-1].split() == ["TOTAL", "150", "390"]


def test_task_by_arm_warnings_name_their_arm(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each arm is tallied apart; before, its warnings came without its name, so two arms
    missing usage printed two anonymous "ok call(s) have no token usage" lines."""
    rows = [*ROWS[:3], {"case_id": "c3", "strategy": "cot", "status": "ok"}]  # no usage
    path = tmp_path / "exp-2.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = _json(capsys, str(path), "--by", "task,arm")
    missing = [w for w in data["warnings"] if "no token usage" in w]
    assert len(missing) == 1 and missing[0].startswith("arm cot: 1 ok call(s)"), data["warnings"]
