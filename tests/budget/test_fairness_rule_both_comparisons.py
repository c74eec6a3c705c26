"""The guide's rule asks for both comparisons: B over A at n=1 and D over C at N (with the
matched budget beside it). A new arm that gains at n=1 but loses at N is not a real evolution,
and the record says which comparison holds."""

from __future__ import annotations

from collections import Counter

import pytest

from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.fairness_sim import four_arm_design

ARMS = ("old_1", "new_1", "old_n", "new_n")
# +10 pp at n=1 and about -19 pp at N and at the matched budget: the new method's samples
# mostly repeat one answer per task (agree_new 0.9), so drawing four of them buys little.
GAIN_THEN_LOSS = {"p_old": 0.5, "p_new": 0.63, "n_old": 4, "n_new": 4, "agree_new": 0.9}


@pytest.mark.parametrize(("tasks", "reps"), [(50, 30), (100, 30), (400, 12)])
def test_gain_at_n1_with_a_loss_at_n_is_not_a_real_evolution(tasks: int, reps: int) -> None:
    # The old rule looked at n=1 only: 22% / 43% / 94% real_improvement at 50 / 100 / 400.
    got: Counter = Counter()
    for rep in range(reps):
        rows = four_arm_design(tasks=tasks, seed=500 + rep, **GAIN_THEN_LOSS)
        got[fairness_verdict(rows, *ARMS, bootstrap=200, seed=rep)["verdict"]] += 1
    called_real = sum(n for verdict, n in got.items() if verdict.startswith("real_"))
    assert called_real <= 0.05 * reps, got


def test_the_record_says_which_comparison_holds() -> None:
    rows = four_arm_design(tasks=400, seed=3, **GAIN_THEN_LOSS)
    record = fairness_verdict(rows, *ARMS, bootstrap=300)
    comp = record["comparisons"]
    assert comp["n1"]["holds"] is True and comp["n1"]["ci95"][0] > 0
    assert comp["n_way"]["holds"] is False and comp["n_way"]["worse"] is True
    assert comp["n_way"]["ci95"][1] < 0 and comp["matched_budget"]["worse"] is True
    assert record["verdict"] == "inconclusive"
    assert record["reason"].startswith(
        "B over A (n=1) holds; D over C (N, or at the matched budget) does not hold"
    )
    assert "a real evolution needs both" in record["reason"]


def test_both_holding_is_a_real_evolution_with_each_interval() -> None:
    rows = four_arm_design(p_old=0.5, p_new=0.68, n_old=4, n_new=4, tasks=200, seed=2)
    record = fairness_verdict(rows, *ARMS, bootstrap=300)
    assert record["verdict"] == "real_evolution", record["reason"]
    comp = record["comparisons"]
    assert comp["n1"]["holds"] and comp["n_way"]["holds"] and not comp["matched_budget"]["worse"]
    assert record["reason"].startswith("both hold: pass@1 improves by")
    assert "pass@N changes by" in record["reason"] and "matched budget" in record["reason"]
