"""Repeated sessions are independent runs: they must not multiply an arm's cost per task."""

from __future__ import annotations

from pathlib import Path

from eloledger.budget.outcomes import ledger_outcomes
from eloledger.ledger import LedgerWriter
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report


def _write(path: Path, sessions: int) -> None:
    with LedgerWriter(path) as writer:
        for task in ("t1", "t2"):
            for session in range(sessions):
                for sample in range(4):
                    writer.append(
                        {
                            "task_id": task,
                            "arm": "bo4",
                            "session": f"{task}-{session}",
                            "sample": sample,
                            "role": "sample",
                            "status": "ok",
                            "prompt_tokens": 10,
                            "completion_tokens": 15,
                            "total_tokens": 25,
                            "usage_source": "server",
                            "passed": sample == 0,
                        }
                    )


def test_two_sessions_cost_the_same_per_task_as_one(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    _write(one, sessions=1)
    _write(two, sessions=2)
    c1, c2 = (ledger_outcomes(path)[0]["bo4"] for path in (one, two))
    assert c1.tokens_per_task == c2.tokens_per_task == 100.0
    assert c2.sessions == 2 * c1.sessions == 4 and c1.tasks == c2.tasks == 2
    assert c1.k == c2.k == 4
    assert c2.per_task_calls == {"t1": 8, "t2": 8}
    assert c2.total_tokens == 2 * c1.total_tokens == 400.0


def test_pass_at_k_and_tokens_per_success_use_sessions(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    _write(path, sessions=2)
    costs, _ = ledger_outcomes(path)
    comps = Comparisons.from_records(
        [
            {"task_id": "t1", "a": "bo4", "b": "other", "outcome": 1.0},
            {"task_id": "t2", "a": "bo4", "b": "other", "outcome": 0.0},
        ]
    )
    report = elo_report(comps, costs=costs, bootstrap_rounds=0)
    row = next(p for p in report.to_json()["players"] if p["name"] == "bo4")
    assert row["pass_k"] == 4  # samples per session, not 8 across both sessions
    # unbiased estimator on the pooled 8 samples (2 pass): 1 - C(6,4)/C(8,4)
    assert abs(row["pass_at_k"] - (1 - 15 / 70)) < 1e-12
    assert row["tokens_per_success"] == 400.0 / 4  # 400 tokens, 4 solved sessions (tasks)
