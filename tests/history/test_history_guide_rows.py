"""``history`` and ``audit`` on a ledger in the shape the guides write (seed 003): every row
carries the arm's ``n`` and none a ``sample`` index. A best-of-8 arm is n = 8 there; reading the
missing ``sample`` as 0 made it n = 1, and the audit's "BoN share" 0.00.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main

ARMS = (("baseline", 1, 10), ("best_of_8", 8, 16))  # name, n, tasks solved of 20


def _seed_003_rows(tasks: int = 20) -> list[dict]:
    """One row per call in the guide's names: case_id, strategy, n, request/response tokens,
    judge_score, an ISO-8601 timestamp, experiment_id; no sample."""
    rows = []
    for arm, n, solved in ARMS:
        for i in range(tasks):
            for _ in range(n):
                rows.append({
                    "experiment_id": "exp-3", "case_id": f"gsm-{i}", "strategy": arm, "n": n,
                    "request_tokens": 120, "response_tokens": 80,
                    "judge_score": 1.0 if i < solved else 0.0,
                    "timestamp": "2026-11-20T10:00:00Z",
                })  # fmt: skip
    return rows


def test_history_and_audit_count_n_from_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "exp-3.jsonl"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in _seed_003_rows()))
    assert main(["history", "--add", str(ledger)]) == 0
    capsys.readouterr()
    assert main(["history", "--format", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["arms"]["best_of_8"]["samples_per_session"] == 8
    assert run["arms"]["baseline"]["samples_per_session"] == 1
    assert main(["audit", "--by", "run", "--format", "json"]) == 0
    (period,) = json.loads(capsys.readouterr().out)["periods"]
    assert period["bestofn_share"] == pytest.approx(0.5)  # one arm of two is best-of-n
    assert period["pass_at_1_n1"] == pytest.approx(0.5)  # the baseline alone: 10 of 20
