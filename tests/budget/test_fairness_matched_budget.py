"""The matched-budget comparison of the N-way arms reads each arm at the budget it really has:
a real number of samples, by interpolation of the unbiased pass@k, never a silent round-down."""

from __future__ import annotations

from math import comb

import pytest

from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.sampling_sim import four_arms

ARMS = ("old_1", "new_1", "old_n", "new_n")


def _copy_of_old(rows: list[dict], tokens: int) -> list[dict]:
    """The four-arm rows with new_1/new_n replaced by exact copies of old_1/old_n (the same
    samples, the same outcomes) whose samples cost ``tokens`` each."""
    kept = [r for r in rows if not r["arm"].startswith("new")]
    copies = [
        {**r, "arm": r["arm"].replace("old", "new"), "total_tokens": tokens}
        for r in kept
        if r["arm"].startswith("old")
    ]
    return kept + copies


def test_identical_method_one_token_dearer_reads_no_change() -> None:
    # The same samples at 1,001 instead of 1,000 tokens: the old reading compared k = 3 with
    # k = 4 and read about -10 pp with an interval excluding 0.
    rows = _copy_of_old(four_arms(n_old=4, n_new=4, tasks=200, repeats=1, seed=11), 1001)
    record = fairness_verdict(rows, *ARMS, bootstrap=500, seed=0)
    matched = record["design"]["matched"]
    assert matched["k_old"] == 4 and matched["k_new"] == pytest.approx(4000 / 1001, abs=1e-6)
    assert matched["budget_tokens"] == pytest.approx(4000)
    delta = record["metrics"]["matched_passk_delta"]
    # The copy really has 0.1% less budget, so it is a hair below (-0.02 pp), never -10 pp.
    assert -0.005 < delta["ci_low"] <= delta["estimate"] <= delta["ci_high"] < 0.005


@pytest.mark.parametrize("seed", [3, 4])
def test_independent_samples_of_an_identical_method_read_about_zero(seed: int) -> None:
    rows = four_arms(n_old=4, n_new=4, tokens_old=1000, tokens_new=1001, tasks=200, seed=seed)
    delta = fairness_verdict(rows, *ARMS, bootstrap=400, seed=seed)["metrics"][
        "matched_passk_delta"
    ]
    assert abs(delta["estimate"]) < 0.03
    assert delta["ci_low"] < 0.0 < delta["ci_high"]


def test_a_fractional_budget_is_the_interpolated_unbiased_pass_at_k() -> None:
    # new samples cost 1,600 tokens: old_n's 4 x 1,000 buys 2.5 of them, read as the mean of
    # the unbiased pass@2 and pass@3 of new_n's own samples (a session drawing 3 samples half
    # of the time and 2 otherwise costs the budget exactly).
    rows = four_arms(n_old=4, n_new=8, tokens_old=1000, tokens_new=1600, tasks=30, seed=5)
    record = fairness_verdict(rows, *ARMS, bootstrap=20, seed=0)
    assert record["design"]["matched"]["k_new"] == pytest.approx(2.5)

    def unbiased(n: int, c: int, k: int) -> float:
        return 1.0 - comb(n - c, k) / comb(n, k)

    def counts(arm: str) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for r in rows:
            if r["arm"] == arm:
                n, c = out.get(r["task_id"], (0, 0))
                out[r["task_id"]] = (n + 1, c + int(r["passed"]))
        return out

    new, old = counts("new_n"), counts("old_n")
    expected = sum(
        0.5 * (unbiased(*new[t], 2) + unbiased(*new[t], 3)) - unbiased(*old[t], 4) for t in new
    ) / len(new)
    got = record["metrics"]["matched_passk_delta"]["estimate"]
    assert got == pytest.approx(expected, abs=1e-6)


def test_a_new_arm_too_short_for_the_budget_is_read_at_all_its_samples_and_said() -> None:
    # new samples cost half as much: the budget buys 8 of them but new_n drew only 4.
    rows = four_arms(n_old=4, n_new=4, tokens_old=1000, tokens_new=500, tasks=30, seed=6)
    matched = fairness_verdict(rows, *ARMS, bootstrap=20)["design"]["matched"]
    assert matched["k_new"] == 4 and matched["capped"] is True
    assert "fewer than the 8.00 the budget buys" in matched["note"]
