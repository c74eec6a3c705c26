"""BCa intervals of bootstrap rounds (`rating/bootstrap.py`): the median-bias correction and
the acceleration, each checked against its definition. Their coverage, against planted truth:
tests/rating/test_rating_truth_bootstrap.py and bench/study_intervals.py.
"""

from __future__ import annotations

import numpy as np

from eloledger.rating.bootstrap import acceleration, bca_interval


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
