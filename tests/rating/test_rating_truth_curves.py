"""Budget curves against known truth, seeded and fast.

* The best-of-k reference is each arm's own empirical best-of-k: exact against brute-force
  enumeration of subsets, exactly 400·log10(k) for tie-free scores, and, for pass/fail
  scores, the Bradley–Terry gains of the true best-of-k law -- far below +400 per decade.
* An ideal sampler on pass/fail tasks lies on its own reference (no ``b_inf``).
* A grid finer than one sample's cost adds no flat-then-steep points; curves stop at the
  sessions' common length.
* Curve intervals resample tasks by default and cover at 30 tasks.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from eloledger.budget.curves import budget_curves
from eloledger.budget.reference import ELO_PER_LN, best_of_k_gains, pair_win
from eloledger.budget.sampling_sim import sampling_sessions
from eloledger.rating.bt import fit_bt


def test_pair_win_equals_brute_force_enumeration() -> None:
    rng = np.random.default_rng(0)
    for _ in range(40):
        n = int(rng.integers(3, 8))
        pool = rng.integers(0, 3, n).astype(float)  # many ties
        k = int(rng.integers(1, n))
        j = int(rng.integers(1, n - k + 1))
        total = count = 0.0
        for a in itertools.combinations(range(n), k):
            rest = [i for i in range(n) if i not in a]
            for b in itertools.combinations(rest, j):
                x, y = pool[list(a)].max(), pool[list(b)].max()
                total += 1.0 if x > y else 0.5 if x == y else 0.0
                count += 1
        assert pair_win(pool, k, j) == pytest.approx(total / count, abs=1e-12)


def exact_pair_win(pool: np.ndarray, k: int, j: int) -> float:
    """The module's counting formula in Python's whole numbers (no float anywhere)."""
    n, values = len(pool), sorted(pool.tolist())

    def ways(a: int, b: int) -> int:
        if b <= a:
            return math.comb(b, j) * math.comb(a - j, k) if a >= j else 0
        return math.comb(a, k) * math.comb(b - k, j) if b >= k else 0

    win = tie = 0
    for v in sorted(set(values)):
        less = values.index(v)
        upto = less + values.count(v)
        win += ways(upto, less) - ways(less, less)
        tie += ways(upto, upto) - ways(upto, less) - ways(less, upto) + ways(less, less)
    total = math.comb(n, j) * math.comb(n - j, k)
    return float(Fraction(2 * win + tie, 2 * total))


@pytest.mark.parametrize(("n", "levels"), [(40, 3), (600, 2), (601, 2), (1200, 2), (900, 5)])
def test_pair_win_of_big_pools_equals_whole_number_counting(n: int, levels: int) -> None:
    """Past ~650 samples the counts pass 1e308 (a session of a thousand samples made
    ``curve`` fail); the shares are then taken in logarithms, still exact to 1e-12."""
    pool = np.random.default_rng(n).integers(0, levels, n).astype(float)
    for k, j in [(1, 1), (2, 1), (8, 3), (40, 39), (300, 200), (n // 2, n // 2)]:
        if k + j <= n:
            assert pair_win(pool, k, j) == pytest.approx(exact_pair_win(pool, k, j), abs=1e-12)


def test_past_64_samples_only_the_asked_k_are_players_and_tie_free_still_gives_the_law() -> None:
    rng = np.random.default_rng(4)
    pools = [rng.normal(size=900) for _ in range(4)]
    asked = [3, 17, 100, 400]
    gains = best_of_k_gains(pools, 400, asked)
    k = np.array(asked)
    assert gains[k - 1] == pytest.approx(400 * np.log10(k), abs=1e-6)
    assert gains[0] == 0.0 and np.isnan(np.delete(gains, [0, *(k - 1)])).all()


def test_tie_free_scores_give_exactly_400_log10_k() -> None:
    rng = np.random.default_rng(1)
    gains = best_of_k_gains([rng.normal(size=40) for _ in range(12)], 16)
    assert gains == pytest.approx(400 * np.log10(np.arange(1, 17)), abs=1e-6)


def test_pass_fail_reference_matches_the_true_best_of_k_law() -> None:
    """Truth: on a task with pass rate p, best-of-k passes with q_k = 1 - (1-p)^k; best-of-k
    beats best-of-j with q_k(1-q_j) + (ties)/2. Fitted by the same Bradley–Terry model."""
    rng = np.random.default_rng(2)
    p = rng.beta(1.0, 1.5, 300)
    K = 16
    q = 1 - (1 - p[:, None]) ** np.arange(1, K + 1)[None, :]
    W = np.zeros((K, K))
    for a in range(K):
        for b in range(K):
            if a != b:
                qa, qb = q[:, a], q[:, b]
                W[a, b] = np.sum(qa * (1 - qb) + 0.5 * (qa * qb + (1 - qa) * (1 - qb)))
    fit = fit_bt(W)
    truth = ELO_PER_LN * (fit.theta - fit.theta[0])
    pools = [(rng.random(200) < pt).astype(float) for pt in p]
    gains = best_of_k_gains(pools, K)
    assert gains == pytest.approx(truth, abs=12.0)
    assert gains[-1] < 0.6 * 400 * np.log10(K)  # far below the continuous law's +482


def _ideal_binary(seed: int, **kw):
    return sampling_sessions(
        arms=("ideal",), tasks=40, sessions=6, samples=16, levels=2, seed=seed, **kw
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_an_ideal_sampler_on_pass_fail_tasks_lies_on_its_own_reference(seed: int) -> None:
    curve = budget_curves(_ideal_binary(seed), bootstrap=100, seed=seed).arm("ideal")
    assert curve.reference_kind == "empirical"
    inside = (curve.reference_elo >= curve.ci_low - 1e-6) & (
        curve.reference_elo <= curve.ci_high + 1e-6
    )
    assert inside.all(), (curve.elo - curve.reference_elo, curve.ci_low, curve.ci_high)
    assert curve.b_inf is None  # the old +400/decade line fired at the first point
    # The reference is indexed by samples: 16 samples gain far less than +400·log10(16).
    assert curve.reference_elo[-1] - curve.elo[0] < 0.6 * 400 * np.log10(16)


def test_a_grid_finer_than_one_sample_adds_no_empty_points() -> None:
    rows = sampling_sessions(arms=("iid",), tasks=30, sessions=6, samples=8, seed=3)
    curve = budget_curves(rows, grid=1.2, bootstrap=0).arm("iid")
    assert np.all(np.diff(curve.samples) >= 1)  # every point has at least one new sample
    assert np.all(curve.slope_per_decade > 0)  # no flat segment inside one sample
    # The reference at each point is that of its samples (no +70 where nothing was sampled).
    k = curve.samples
    assert curve.reference_elo - curve.reference_elo[0] == pytest.approx(
        400 * np.log10(k / k[0]), abs=1e-6
    )


def test_curves_stop_at_the_sessions_common_length() -> None:
    rows = sampling_sessions(arms=("iid",), tasks=30, sessions=6, samples=16, jitter=0.3, seed=4)
    result = budget_curves(rows, bootstrap=50, seed=4)
    curve = result.arm("iid")
    lengths = {}
    for r in rows:
        key = (r["task_id"], r["session"])
        lengths[key] = lengths.get(key, 0) + r["total_tokens"]
    assert curve.tokens[-1] <= min(lengths.values())
    assert curve.b_inf is None  # an ideal arm does not "slow down" because sessions ended
    assert any("common length" in w for w in result.warnings)


def _coverage(resample: str, reps: int) -> float:
    """Two arms equal on average but different task by task (population Elo gap 0 at equal
    budgets): does arm b's interval at the anchor's budget cover 1000?"""
    hits = []
    for rep in range(reps):
        rows = sampling_sessions(
            arms=("a", "b"), tasks=30, sessions=4, samples=4, arm_task_sd=1.0, seed=500 + rep
        )
        result = budget_curves(rows, bootstrap=80, seed=rep, resample=resample)
        anchor_arm = result.anchor.split("@")[0]
        other = result.arm("b" if anchor_arm == "a" else "a")
        first = result.arm(anchor_arm).tokens[0]
        at = np.flatnonzero(other.tokens == first)
        if len(at):
            hits.append(other.ci_low[at[0]] <= 1000.0 <= other.ci_high[at[0]])
    return float(np.mean(hits))


def test_curve_intervals_resample_tasks_by_default_and_cover_at_30_tasks() -> None:
    rows = sampling_sessions(arms=("a", "b"), tasks=5, sessions=2, samples=2, seed=0)
    assert budget_curves(rows, bootstrap=5).resample == "tasks"
    assert _coverage("tasks", 80) >= 0.9
    assert _coverage("sessions", 30) < 0.75  # the old default held the tasks fixed
