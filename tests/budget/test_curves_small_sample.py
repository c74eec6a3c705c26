"""Budget-curve intervals get the small-sample widening `eloledger elo --bootstrap` has.

A task bootstrap's percentile interval under-covers with few tasks (its variance is the
plug-in (G-1)/G of the unbiased one, and the normal quantile ignores that it is estimated
from G tasks). Two equal arms whose tasks differ (arm x task effects): at 6 tasks the curve
interval held the truth (the other arm at the anchor's budget: 1000) in 0.85 of runs. Larger
runs at 10 and 30 tasks: bench/study_intervals.py.
"""

from __future__ import annotations

import numpy as np

from eloledger.budget.curves import budget_curves
from eloledger.budget.sampling_sim import sampling_sessions


def test_curve_intervals_cover_at_few_tasks() -> None:
    hits = []
    for rep in range(40):  # 40 small fits, about 5 s on one core: the fewest that separate
        rows = sampling_sessions(arms=("a", "b"), tasks=6, sessions=2, samples=2,
                                 arm_task_sd=1.0, seed=rep)  # fmt: skip
        result = budget_curves(rows, bootstrap=60, seed=rep, resample="tasks")
        anchor = result.anchor.split("@")[0]
        other = result.arm("b" if anchor == "a" else "a")
        at = np.flatnonzero(other.tokens == result.arm(anchor).tokens[0])
        assert len(at)
        hits.append(other.ci_low[at[0]] <= 1000.0 <= other.ci_high[at[0]])
    assert np.mean(hits) >= 0.9, np.mean(hits)

