"""`elo --intervals bootstrap` gives BCa intervals: the percentile interval of a task bootstrap
sits too far from the anchor when ratings are far apart and games are few.

A Bradley–Terry MLE from few games spreads the ratings out, and its bootstrap rounds spread
them out again, so the percentile interval (even widened by sqrt(G/(G-1))·t_(G-1)/z) misses on
the far side. Four players 150 Elo apart, 8 tasks, one game per pair a task: the widened
percentile intervals held the truth in 0.917 of 300 (seeded); BCa's bias correction and
acceleration bring it to 0.950. Larger designs: bench/study_intervals.py.
"""

from __future__ import annotations

import numpy as np

from eloledger.rating.bootstrap import acceleration, bca_interval
from eloledger.rating.budget_sim import round_robin
from eloledger.rating.comparisons import Comparisons
from eloledger.rating.table import elo_report

TRUE = {"a": 0.0, "b": 150.0, "c": 300.0, "d": 450.0}


def test_bootstrap_intervals_cover_with_wide_gaps_and_few_tasks() -> None:
    hits = []
    for seed in range(100):  # 100 fits of 300 rounds: about 5 s on one core
        t, a, b, o = zip(*round_robin(TRUE, 8, np.random.default_rng(seed)), strict=True)
        comps = Comparisons.from_arrays(list(t), list(a), list(b), list(o))
        report = elo_report(
            comps, anchor="a", intervals="bootstrap", bootstrap_rounds=300, seed=seed
        )
        rows = {p["name"]: p for p in report.players}
        hits += [rows[k]["ci_low"] <= 1000 + TRUE[k] <= rows[k]["ci_high"] for k in "bcd"]
    assert np.mean(hits) >= 0.94, np.mean(hits)


def test_bca_moves_the_levels_by_the_rounds_median_bias() -> None:
    """Rounds centred 0.5 sd above the estimate say the estimate runs 0.5 high: z0 = -0.5,
    the levels become Φ(2·z0 ∓ 1.96), and with no skew the interval is the estimate - 0.5
    ± 1.96 (the percentile interval would be the estimate + 0.5 ± 1.96)."""
    rounds = np.random.default_rng(0).standard_normal((200_000, 1)) + 0.5
    lo, hi = bca_interval(rounds, np.zeros(1), np.zeros(1), 0.95)
    assert abs(lo[0] + 2.46) < 0.05 and abs(hi[0] - 1.46) < 0.05, (lo, hi)


def test_acceleration_is_the_skew_of_the_pulls() -> None:
    """Σu³ / (6 (Σu²)^1.5) of the centred pulls: one unit pulling against three gives a
    positive skew, symmetric pulls none."""
    symmetric = np.array([[-1.0], [1.0], [-2.0], [2.0]])
    assert acceleration(symmetric)[0] == 0.0
    skewed = np.array([[3.0], [-1.0], [-1.0], [-1.0]])
    expected = (27 - 3) / (6 * 12**1.5)
    assert abs(acceleration(skewed)[0] - expected) < 1e-12
