"""Is an agent at budget b better than the best of k of its own sessions cut at b0?

The checkpoint verdict (:mod:`eloledger.budget.checkpoint_curves`) asks whether an agent's own
strategy beats sampling again at the same budget. Reading that off a pooled Bradley-Terry fit
and a best-of-k line built from the tie-free 400·log10 k law (or a line fitted separately, with
its uncertainty ignored) called an exact repeated sampler "below" in most runs when scores tie
(pass/fail tasks, rubric levels): the fit's scale and the line's disagree once ties are many.

Here the agent meets the sampler head to head, in the data's own tie structure:

* Within a task, session s at budget b (value ``x_s``) meets the best of a random k-subset of
  the *other* sessions cut at b0 (values ``y_u``, u != s). Its win probability, ties half, is
  exact by counting: ``P(max < x) = C(#{y < x}, k) / C(n - 1, k)`` and the same with ``<=``.
  The subset is disjoint from s, so when the agent is itself a repeated sampler (its value at b
  a best of k independent tries) the expected win probability is exactly 1/2 -- whatever the
  ties -- and the test has its nominal size.
* Per task, ``d_t`` = the mean over its sessions minus 1/2; tasks are independent, so the
  mean of ``d_t`` has a Student-t interval with T - 1 degrees of freedom. Its spread includes
  the line's own sampling error (each task's line is built from that task's few sessions).
* The gap in Elo is 400·log10(p / (1 - p)) of the win probability p = 1/2 + mean d: under
  Bradley-Terry it is the agent's Elo minus the sampler's.

A budget needs k + 1 sessions on a task (the session itself and k others); with fewer than
``MIN_TASKS`` such tasks there is no test there ("too few sessions for a verdict").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import comb, stdtrit

MIN_TASKS = 5  # tasks (independent clusters) a test needs, as for every checkpoint interval
_P_CLIP = 1e-3  # win probabilities are read within [0.001, 0.999]: at most ±1200 Elo


@dataclass(frozen=True)
class PairedGap:
    """Agent Elo minus the sampler's at one budget, with its interval, from ``tasks`` tasks."""

    gap: float
    low: float
    high: float
    win: float  # P(agent beats the best of k), ties half
    tasks: int


def win_against_best_of_k(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """For each session s of one task: P(x[s] beats the best of a random k-subset of the
    other sessions' values y[u], u != s), ties half. Needs k <= len(y) - 1."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    m = len(y) - 1
    if k < 1 or k > m:
        raise ValueError("need 1 <= k <= sessions - 1")
    below = (y[None, :] < x[:, None]).sum(1) - (y < x)
    upto = (y[None, :] <= x[:, None]).sum(1) - (y <= x)
    total = comb(m, k)
    return 0.5 * (comb(below, k) + comb(upto, k)) / total


def paired_gap(
    at_b: Sequence[np.ndarray], at_b0: Sequence[np.ndarray], k: int, level: float
) -> PairedGap | None:
    """The task-level test of one budget: ``at_b[t]`` and ``at_b0[t]`` are task t's sessions'
    values at b and at b0 (same order). None when fewer than MIN_TASKS tasks have k + 1
    sessions."""
    d = [
        float(np.mean(win_against_best_of_k(x, y, k))) - 0.5
        for x, y in zip(at_b, at_b0, strict=True)
        if len(y) >= k + 1
    ]
    if len(d) < MIN_TASKS:
        return None
    mean = float(np.mean(d))
    se = float(np.std(d, ddof=1)) / math.sqrt(len(d))
    q = float(stdtrit(len(d) - 1, 0.5 + level / 2.0))
    return PairedGap(
        elo_of(0.5 + mean), elo_of(0.5 + mean - q * se), elo_of(0.5 + mean + q * se),
        0.5 + mean, len(d),
    )  # fmt: skip


def elo_of(p: float) -> float:
    """Elo difference of a win probability (clipped to [0.001, 0.999])."""
    p = min(max(p, _P_CLIP), 1.0 - _P_CLIP)
    return 400.0 * math.log10(p / (1.0 - p))


def sessions_needed(k: int) -> int:
    """Sessions a task needs for a test at k: the session and k others."""
    return k + 1
