"""The fairness verdict against known truth, seeded and fast.

``budget_leakage`` needs evidence that the N-way gain was bought (the matched-budget comparison:
more bought than kept, nothing beyond the margin kept; or equivalence at n=1 and at the matched
budget within 5 pp); a failure to reject is ``inconclusive``, with what the design can detect. The old rule (pass@1 interval merely not
above 0) called a real +5 / +10 pp gain on 100 tasks leakage about a third of the time.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.sampling_sim import four_arms

ARMS = ("old_1", "new_1", "old_n", "new_n")


def verdicts(reps: int, bootstrap: int = 300, **design) -> Counter:
    out: Counter = Counter()
    for rep in range(reps):
        rows = four_arms(seed=7000 + rep, **design)
        out[fairness_verdict(rows, *ARMS, bootstrap=bootstrap, seed=rep)["verdict"]] += 1
    return out


@pytest.mark.parametrize("p_new", [0.55, 0.60])
def test_real_gain_on_too_few_tasks_is_never_called_leakage(p_new: float) -> None:
    # A true per-sample gain of about +5 / +10 pp, 100 tasks x 1 sample at n=1, and a new
    # N-way arm that draws 8 samples to the old one's 4 (2x the tokens).
    reps = 80
    got = verdicts(reps, p_old=0.5, p_new=p_new, n_old=4, n_new=8, tasks=100, repeats=1)
    assert got["budget_leakage"] <= 0.05 * reps, got


def test_clear_leakage_at_400_tasks_is_found() -> None:
    # Same method, same cost per sample; the new N-way arm only draws twice the samples.
    reps = 8
    got = verdicts(reps, bootstrap=300, p_old=0.5, p_new=0.5, n_old=4, n_new=8, tasks=400)
    assert got["budget_leakage"] >= 0.75 * reps, got


@pytest.mark.parametrize("tasks", [10, 30, 100])
def test_real_evolution_null_rate_is_kept(tasks: int) -> None:
    # No difference at all: the one-sided 2.5% rule of B over A (now with D over C) stays
    # near its nominal rate (measured 2-4% here over 200 runs).
    reps = 200
    got = verdicts(reps, p_old=0.5, p_new=0.5, n_old=4, n_new=4, tasks=tasks, repeats=1)
    assert got["real_evolution"] <= 0.05 * reps, got


def test_inconclusive_reports_the_detectable_effect() -> None:
    """The minimum detectable effect at 80% power matches the design's known variance:
    per task the n=1 delta has variance 2 E[p(1-p)] / repeats (independent samples)."""
    tasks, repeats = 100, 1
    rows = four_arms(p_old=0.5, p_new=0.55, n_old=4, n_new=8, tasks=tasks, repeats=repeats, seed=3)
    record = fairness_verdict(rows, *ARMS, bootstrap=2000, seed=0)
    assert record["verdict"] != "budget_leakage"
    rng = np.random.default_rng(0)
    p = 1 / (1 + np.exp(-rng.normal(0.0, 1.0, 200_000)))  # the generator's difficulty law
    p2 = 1 / (1 + np.exp(-(np.log(0.55 / 0.45) + rng.normal(0.0, 1.0, 200_000))))
    var = (np.mean(p * (1 - p)) + np.mean(p2 * (1 - p2))) / repeats
    var += np.var(p2 - p)  # the per-task gain varies a little too
    mde = 2.8016 * np.sqrt(var / tasks)
    assert record["design"]["mde_pass1"] == pytest.approx(mde, rel=0.2)
    if record["verdict"] == "inconclusive":
        assert "100 tasks x 1 sample detect a pass@1 change of" in record["reason"]


def test_same_budget_is_said_only_when_it_is() -> None:
    rows = four_arms(p_old=0.5, p_new=0.5, tokens_old=1000, tokens_new=2500, tasks=60, seed=1)
    reason = fairness_verdict(rows, *ARMS, bootstrap=200)["reason"]
    assert "at the same budget" not in reason
    assert "new_1 spends 2.50x old_1's tokens" in reason
    same = fairness_verdict(four_arms(tasks=60, seed=1), *ARMS, bootstrap=200)["reason"]
    assert "at the same budget" in same


def test_matched_budget_uses_each_arms_own_samples() -> None:
    """new_n draws 16 samples to old_n's 4 at the same cost per sample: it is read at k = 4
    (the unbiased pass@k of its 16 samples, Chen et al. 2021) -- equal methods, delta ~ 0."""
    rows = four_arms(p_old=0.5, p_new=0.5, n_old=4, n_new=16, tasks=400, seed=2)
    record = fairness_verdict(rows, *ARMS, bootstrap=300)
    matched_design = record["design"]["matched"]
    assert (matched_design["k_old"], matched_design["k_new"], matched_design["basis"]) == (
        4, 4.0, "tokens"
    )
    matched = record["metrics"]["matched_passk_delta"]
    assert abs(matched["estimate"]) < 0.03 and matched["ci90_low"] < 0 < matched["ci90_high"]
    assert record["metrics"]["passN_delta"]["ci_low"] > 0.05  # the unmatched gain is large
    assert record["verdict"] == "budget_leakage", record["reason"]
