"""Budget fairness: planted leakage, a genuine same-budget gain, and inconclusive cases."""

from __future__ import annotations

import pytest

from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.sampling_sim import four_arms
from eloledger.errors import UserError

ARMS = ("old_1", "new_1", "old_n", "new_n")


def _verdict(rows, **kwargs):
    kwargs.setdefault("bootstrap", 500)
    kwargs.setdefault("seed", 0)
    return fairness_verdict(rows, *ARMS, **kwargs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_new_arm_that_wins_only_with_more_samples_is_budget_leakage(seed: int) -> None:
    # Same per-sample quality and cost; the new N-way arm draws 16 samples instead of 4.
    # "No gain at n=1" needs evidence (an equivalence test within 5 pp), so 400 tasks, not 60
    # (at 60 tasks the same data is inconclusive).
    rows = four_arms(p_old=0.5, p_new=0.5, n_old=4, n_new=16, tasks=400, seed=seed)
    record = _verdict(rows)
    assert record["verdict"] == "budget_leakage", record["reason"]
    metrics = record["metrics"]
    assert metrics["passN_delta"]["ci_low"] > 0
    assert metrics["token_ratio_n"]["estimate"] == pytest.approx(4.0)
    assert metrics["pass1_delta"]["ci_low"] <= 0 <= metrics["pass1_delta"]["ci_high"]
    assert "4.00x the tokens" in record["reason"]


def test_new_arm_with_costlier_samples_wins_only_by_spending_is_budget_leakage() -> None:
    # The new method is no better per sample but each sample costs 5x (longer reasoning);
    # its N-way arm runs more samples too, so its pass@N gain is paid for in tokens.
    rows = four_arms(
        p_old=0.5, p_new=0.5, n_old=4, n_new=8, tokens_old=1000, tokens_new=5000, tasks=400, seed=1
    )
    record = _verdict(rows)
    assert record["verdict"] == "budget_leakage", record["reason"]
    assert record["metrics"]["token_ratio_n"]["estimate"] == pytest.approx(10.0)
    assert record["metrics"]["tokens_per_success_ratio"]["estimate"] > 3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_genuine_same_budget_gain_is_real_evolution(seed: int) -> None:
    rows = four_arms(p_old=0.5, p_new=0.68, n_old=4, n_new=4, seed=seed)
    record = _verdict(rows)
    assert record["verdict"] == "real_evolution", record["reason"]
    metrics = record["metrics"]
    assert metrics["pass1_delta"]["ci_low"] > 0
    assert metrics["tokens_per_success_ratio"]["estimate"] <= 1.10
    assert metrics["token_ratio_n"]["estimate"] == pytest.approx(1.0)


def test_no_difference_is_inconclusive() -> None:
    record = _verdict(four_arms(p_old=0.5, p_new=0.5, seed=3))
    assert record["verdict"] == "inconclusive"
    assert "neither" in record["reason"]


def test_same_budget_gain_bought_with_tokens_per_success_is_inconclusive() -> None:
    rows = four_arms(p_old=0.5, p_new=0.68, tokens_old=1000, tokens_new=2500, seed=0)
    record = _verdict(rows)
    assert record["verdict"] == "inconclusive"
    assert "tolerance" in record["reason"]
    # A looser tolerance makes B over A hold (the rule is explicit), but D over C does not:
    # at old_n's budget new_n affords 1.6 of its 2.5x dearer samples and is worse there.
    loose = _verdict(rows, tps_tolerance=2.0)
    assert loose["comparisons"]["holds"] == {"b_over_a": True, "d_over_c": False}
    assert loose["comparisons"]["matched_budget"]["worse"] is True
    assert loose["verdict"] == "inconclusive"


def test_metrics_match_hand_computation_and_interaction() -> None:
    rows = four_arms(p_old=0.4, p_new=0.6, n_old=4, n_new=4, tasks=20, seed=9)
    record = _verdict(rows, bootstrap=50)
    arms = record["arms"]

    def rate(arm: str) -> float:
        by_task: dict[str, list[float]] = {}
        sessions: dict[tuple[str, str], float] = {}
        for r in rows:
            if r["arm"] != arm:
                continue
            if arm.endswith("_1"):
                by_task.setdefault(r["task_id"], []).append(float(r["passed"]))
            else:
                key = (r["task_id"], r["session"])
                sessions[key] = max(sessions.get(key, 0.0), float(r["passed"]))
        for (task, _), ok in sessions.items():
            by_task.setdefault(task, []).append(ok)
        return sum(sum(v) / len(v) for v in by_task.values()) / len(by_task)

    pass1 = rate("new_1") - rate("old_1")
    pass_n = rate("new_n") - rate("old_n")
    metrics = record["metrics"]
    assert metrics["pass1_delta"]["estimate"] == pytest.approx(pass1, abs=1e-6)
    assert metrics["passN_delta"]["estimate"] == pytest.approx(pass_n, abs=1e-6)
    assert metrics["interaction"]["estimate"] == pytest.approx(pass_n - pass1, abs=1e-6)
    tps_old = sum(r["total_tokens"] for r in rows if r["arm"] == "old_1") / sum(
        r["passed"] for r in rows if r["arm"] == "old_1"
    )
    assert arms["old_1"]["tokens_per_success"] == pytest.approx(tps_old, rel=1e-6)
    assert arms["new_n"]["samples"] == 20 * 4 * 4


def test_record_is_archivable_and_reproducible() -> None:
    rows = four_arms(seed=1, tasks=20)
    one = _verdict(rows, bootstrap=200, seed=5)
    two = _verdict(rows, bootstrap=200, seed=5)
    assert one == two
    assert one["kind"] == "eloledger.fairness" and one["schema"] == 3
    assert one["inputs"]["seed"] == 5 and one["inputs"]["bootstrap"] == 200
    assert one["inputs"]["old_1"] == "old_1" and one["eloledger_version"]
    assert one["verdict"] in ("real_evolution", "budget_leakage", "inconclusive")
    assert one["reason"].endswith(".") and "\n" not in one["reason"]
    assert "budget_leakage" in one["rule"]


def test_select_rows_decide_an_n_way_session() -> None:
    rows = four_arms(tasks=4, repeats=2, seed=2)
    # Give every new_n session a select row that fails: the arm's answer is what it selected.
    sessions = {(r["task_id"], r["session"]) for r in rows if r["arm"] == "new_n"}
    for task, session in sessions:
        rows.append(
            {
                "task_id": task,
                "arm": "new_n",
                "session": session,
                "role": "select",
                "status": "ok",
                "total_tokens": 10,
                "passed": False,
            }
        )
    record = _verdict(rows, bootstrap=20)
    assert record["arms"]["new_n"]["pass_rate"] == 0.0
    assert record["arms"]["new_n"]["samples"] == 4 * 2 * 4  # select rows are not samples


def test_unknown_arm_lists_the_ledgers_arms() -> None:
    rows = four_arms(tasks=3)
    with pytest.raises(UserError) as err:
        fairness_verdict(rows, "old_1", "nope", "old_n", "new_n", bootstrap=10)
    text = err.value.one_line()
    assert "new_1='nope'" in text
    assert "new_1, new_n, old_1, old_n" in text


def test_too_few_common_tasks_is_a_user_error() -> None:
    rows = [
        r for r in four_arms(tasks=3) if not (r["arm"] == "new_n" and r["task_id"] != "task000")
    ]
    with pytest.raises(UserError, match="only 1 task"):
        _verdict(rows)
