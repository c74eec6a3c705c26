"""Planted truth for the checkpoint curves (tests/checkpoint_truth.py).

Three synthetic agents whose true Elo at every budget is known exactly -- one improves like
sampling again, one plateaus after three attempts, one beats sampling -- plus a k-shot chat
arm on the same axes. The verdicts, slopes and Elo must come out right within their intervals
over several seeds, and a deliberately wrong truth must be rejected (the check can fail).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from checkpoint_truth import COST, SHAPES, planted_rows, true_elo
from eloledger.budget.checkpoint_curves import checkpoint_curves, has_checkpoints
from eloledger.errors import UserError

SEEDS = (0, 1, 2, 3)
EXPECTED = {"sampler": "on", "plateau": "below", "beater": "above", "kshot": "on"}


@pytest.fixture(scope="module")
def results() -> dict[int, object]:
    return {seed: checkpoint_curves(planted_rows(seed, chat_arm=True), seed=seed) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_verdicts_match_the_planted_agents(results: dict, seed: int) -> None:
    result = results[seed]
    assert {a.name: a.verdict for a in result.arms} == EXPECTED
    for arm in result.arms:
        at = arm.verdict_index()
        assert at is not None and arm.k[at] == 11  # judged at the last budget: 11 sessions' worth
        assert arm.gap_low[at] <= arm.gap[at] <= arm.gap_high[at]


def test_plateau_slows_down_after_its_plateau(results: dict) -> None:
    for result in results.values():
        plateau = result.arm("plateau")
        # it stops improving after 3 attempts (3,000 tokens): the curve falls below the line
        # no earlier than the 3,375-token point and stays below to the end
        assert plateau.slows_down_after is not None
        assert 2 * COST <= plateau.slows_down_after <= 5.1 * COST
        assert result.arm("sampler").slows_down_after is None
        assert result.arm("beater").slows_down_after is None


def _true_gap(shape: str, budget: float) -> float:
    k = max(int(math.floor(budget / COST + 1e-9)), 1)
    return true_elo(shape, budget) - (1000.0 + 400.0 * math.log10(k))


def test_gaps_slopes_and_elo_cover_the_truth(results: dict) -> None:
    """Every interval kind is checked against the planted value; 95% intervals, so over all
    seeds and points at least 85% must cover (and the overall gap at the verdict point always)."""
    hits = {"elo": [], "slope": [], "gap": []}
    for result in results.values():
        for arm in result.arms:
            if arm.name not in SHAPES:
                continue
            truth = np.array([true_elo(arm.name, b) for b in arm.budgets])
            # the pooled anchor is a first point (one draw): the truth is on the fit's scale
            hits["elo"] += list((arm.ci_low - 1e-9 <= truth) & (truth <= arm.ci_high + 1e-9))
            decades = np.diff(np.log10(arm.budgets))
            true_slope = np.diff(truth) / decades
            hits["slope"] += list((arm.slope_low <= true_slope + 1e-9)
                                  & (true_slope - 1e-9 <= arm.slope_high))  # fmt: skip
            gap = np.array([_true_gap(arm.name, b) for b in arm.budgets])
            hits["gap"] += list((arm.gap_low - 1e-9 <= gap) & (gap <= arm.gap_high + 1e-9))
            at = arm.verdict_index()
            assert arm.gap_low[at] - 1e-9 <= gap[at] <= arm.gap_high[at] + 1e-9, arm.name
    for kind, values in hits.items():
        assert np.mean(values) >= 0.85, (kind, np.mean(values))


def test_overall_slope_per_decade_is_right(results: dict) -> None:
    """From the first point to the last: sampler 400·log10(11)/decades, beater twice that,
    plateau 400·log10(3) over the same span; the interval of the contrast must hold it."""
    for result in results.values():
        for name, m in (("sampler", 11), ("plateau", 3), ("beater", 121)):
            arm = result.arm(name)
            span = math.log10(arm.budgets[-1] / arm.budgets[0])
            truth = 400.0 * math.log10(m) / span
            estimate = (arm.elo[-1] - arm.elo[0]) / span
            assert abs(estimate - truth) < 0.25 * truth, (name, estimate, truth)
        # past its plateau every session holds the same work: the last stretch is flat
        assert abs(result.arm("plateau").slope[-1]) < 1e-6


def test_a_wrong_truth_is_rejected(results: dict) -> None:
    """The check can fail: a plateau claimed to scale like sampling lies outside the gap
    interval at the verdict point for every seed."""
    for result in results.values():
        arm = result.arm("plateau")
        at = arm.verdict_index()
        wrong = _true_gap("sampler", arm.budgets[at])  # 0: "on the line"
        assert not (arm.gap_low[at] <= wrong <= arm.gap_high[at])


def test_direction_min_gives_the_same_fit() -> None:
    up = checkpoint_curves(planted_rows(5, tasks=8))
    down = checkpoint_curves(planted_rows(5, tasks=8, direction="min"))
    for a, b in zip(up.arms, down.arms, strict=True):
        assert a.name == b.name and a.verdict == b.verdict
        assert np.allclose(a.elo, b.elo)


def test_seconds_and_cost_axes() -> None:
    from eloledger.ledger.prices import Price

    rows = planted_rows(6, tasks=8, chat_arm=True)
    assert has_checkpoints(rows)
    seconds = checkpoint_curves(rows, axis="seconds")
    tokens = checkpoint_curves(rows)
    for a, b in zip(seconds.arms, tokens.arms, strict=True):
        assert np.allclose(a.budgets, b.budgets * 2.0 / COST)  # 2 s per attempt, 1000 tokens
        assert a.verdict == b.verdict
    priced = checkpoint_curves(rows, axis="cost", prices={"sim-model": Price(2.0, 8.0)})
    per_token = (0.75 * 2.0 + 0.25 * 8.0) / 1e6
    arm = priced.arm("sampler")
    assert np.allclose(arm.budgets, tokens.arm("sampler").budgets * per_token)
    assert arm.cost_per_session == pytest.approx(12 * COST * per_token)
    assert arm.calls_per_session == 12.0  # the agent's turns
    with pytest.raises(UserError, match="no price for model"):
        checkpoint_curves(rows, axis="cost", prices={})


def test_accuracy_per_dollar_and_per_call_on_pass_fail_tasks() -> None:
    """A pass/fail version: score >= 0.5 passes; accuracy = sessions whose final state passes."""
    from eloledger.ledger.prices import Price

    rows = planted_rows(7, tasks=6, shapes=("sampler",), chat_arm=True)
    for row in rows:
        row["passed"] = bool(row["score"] >= 0.9)
        row.pop("direction")
        row.pop("score")
    result = checkpoint_curves(rows, axis="cost", prices={"sim-model": Price(2.0, 8.0)})
    for arm in result.arms:
        finals = [r for r in rows if r["arm"] == arm.name and r["role"] == "sample"]
        if arm.kind == "agent":
            truth = np.mean([r["passed"] for r in finals])
        else:  # no select rows: a chat session solves its task when any sample passes
            by = {}
            for r in finals:
                by.setdefault((r["task_id"], r["session"]), []).append(r["passed"])
            truth = np.mean([any(v) for v in by.values()])
        assert arm.accuracy == pytest.approx(truth)
        assert arm.accuracy_per_call == pytest.approx(truth / 12.0)
        assert arm.accuracy_per_dollar == pytest.approx(truth / arm.cost_per_session)
