"""The planted truth with session costs jittered +-20%.

Each session's (each chat call's) tokens per attempt are 1000 x U(0.8, 1.2), so sessions reach
their checkpoints at budgets that are not multiples of b0. Before the fix a pure sampler (and
the k-shot chat arm) read 'above' repeated sampling in 4 (7) of these 8 seeds: the line's
sessions were cut at b0 = the 90% quantile of first checkpoints (a tenth of them wasted) and
its k = floor(b / b0) ignored that a session cut at b0 spends less than b0.
"""

from __future__ import annotations

import numpy as np
import pytest

from checkpoint_truth import planted_rows
from eloledger.budget.checkpoint_curves import Trace, _arm_grid, checkpoint_curves

SEEDS = tuple(range(8))
EXPECTED = {"sampler": "on", "plateau": "below", "beater": "above", "kshot": "on"}


@pytest.fixture(scope="module")
def results() -> dict[int, object]:
    return {
        seed: checkpoint_curves(planted_rows(seed, chat_arm=True, jitter=0.2), seed=seed)
        for seed in SEEDS
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_jittered_costs_keep_the_planted_verdicts(results: dict, seed: int) -> None:
    result = results[seed]
    assert {a.name: a.verdict for a in result.arms} == EXPECTED
    for name in ("sampler", "kshot"):  # their true gap is 0: the interval holds it
        arm = result.arm(name)
        at = arm.verdict_index()
        assert arm.gap_low[at] <= 0.0 <= arm.gap_high[at], (name, arm.gap[at])


def test_the_sampler_gap_has_no_bias(results: dict) -> None:
    """Over the seeds the sampler's gap at its verdict budget averages near 0 (it was +48)."""
    gaps = [r.arm("sampler").gap[r.arm("sampler").verdict_index()] for r in results.values()]
    assert abs(float(np.mean(gaps))) < 20.0, gaps


def test_the_line_counts_sessions_of_their_spent_cost(results: dict) -> None:
    """k = floor(b / what a session cut at b0 spends), not floor(b / b0): with costs of
    800-1200 tokens per attempt and b0 near 1200, a budget of 11 x b0 affords 13 sessions."""
    arm = results[0].arm("sampler")
    at = arm.verdict_index()
    assert arm.k[at] > np.floor(arm.budgets[at] / arm.budgets[0])
    assert arm.k[at] <= arm.budgets[at] / 800.0


def _trace(first: float) -> Trace:
    budgets = np.array([first, 2 * first, 40_000.0])
    return Trace("t", "a", str(first), "agent", budgets, np.array([1.0, 2.0, 3.0]), 3.0, 0.0)


def test_b0_covers_every_session_but_outliers() -> None:
    firsts = [*np.linspace(900.0, 1300.0, 20), 9000.0]  # one session's first turn is huge
    grid = _arm_grid([_trace(f) for f in firsts], 1.5)
    assert grid is not None and grid[0] == 1300.0  # the 90% quantile was the 19th, 1278.9
