"""The best-of-k reference of one arm, from its own samples.

"Best-of-k of independent samples gains 400·log10(k) Elo" holds only for continuous, tie-free
scores: then the best of k beats the best of j with probability k/(k+j), which Bradley–Terry
(Hunter 2004) fits exactly with θ_k = ln k. With ties counted as half wins -- pass/fail tasks,
five-level rubrics -- repeated sampling can reach much less (binary scores: about +161 Elo at
k=16, not +482), so a fixed +400/decade line sits far above what an ideal sampler achieves and
``b_inf`` fires at once.

The empirical reference: within each task, pool the arm's scored samples (all sessions) and
compute **exactly**, by combinatorial subsampling, the probability that the best of a random
k-subset beats the best of a *disjoint* random j-subset (ties half), for every pair k, j with
k + j ≤ pool size. Summed over tasks this is a win matrix of the players best-of-1 …
best-of-K; the same Bradley–Terry fit (:func:`eloledger.rating.bt.fit_bt`) turns it into Elo
gains over best-of-1. Indexed by samples, not tokens: a budget point's reference is that of the
samples its sessions had completed. For tie-free scores it reproduces 400·log10(k) exactly
(the continuous special case); the tests check it against brute-force enumeration.

Counting: for a pool of n values, with A a random k-subset and B a disjoint random j-subset,
``P(A ⊆ S_a, B ⊆ S_b)`` for nested sets of sizes a ≥ b is C(b, j)·C(a − j, k) / D
(and C(a, k)·C(b − k, j) / D when a ≤ b), D = C(n, j)·C(n − j, k). With m(v) values ≤ v and
l(v) values < v, ``P(max A = v > max B) = F(m, l) − F(l, l)`` and
``P(max A = max B = v) = F(m, m) − F(m, l) − F(l, m) + F(l, l)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import comb

ELO_PER_LN = 400.0 / np.log(10.0)


def _nested(a: np.ndarray, b: np.ndarray, k: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Ways to draw disjoint (A of size k inside the a smallest, B of size j inside the b
    smallest); the two sets are nested, so the smaller one is drawn first. Broadcasts."""
    return np.where(b <= a, comb(b, j) * comb(a - j, k), comb(a, k) * comb(b - k, j))


def pair_wins(pool: np.ndarray, k: np.ndarray, j: np.ndarray) -> np.ndarray:
    """P(best of k beats best of a disjoint j, ties half) for random subsets of ``pool``, for
    every pair (k[i], j[i]) at once (each needs k + j <= pool size)."""
    n = len(pool)
    k = np.asarray(k, dtype=float)[None, :]
    j = np.asarray(j, dtype=float)[None, :]
    if np.any(k + j > n):
        raise ValueError("need k + j <= pool size")
    values = np.sort(np.asarray(pool, dtype=float))
    _, first = np.unique(values, return_index=True)
    less = first.astype(float)[:, None]  # l(v): values below v
    upto = np.append(first[1:], n).astype(float)[:, None]  # m(v): values up to v
    total = comb(n, j) * comb(n - j, k)
    below = _nested(less, less, k, j)
    win = _nested(upto, less, k, j) - below
    tie = _nested(upto, upto, k, j) - _nested(upto, less, k, j) - _nested(less, upto, k, j)
    tie = tie + below
    return ((win.sum(0) + 0.5 * tie.sum(0)) / total[0]).astype(float)


def pair_win(pool: np.ndarray, k: int, j: int) -> float:
    """:func:`pair_wins` for one pair."""
    return float(pair_wins(pool, np.array([k]), np.array([j]))[0])


def best_of_k_gains(pools: Sequence[np.ndarray], k_max: int) -> np.ndarray:
    """Elo of best-of-k over best-of-1 for k = 1..K (K ≤ k_max, limited by the smallest pool:
    k + 1 samples must fit), from one pool of scored samples per task. Entry k-1 is best-of-k;
    NaN past what the pools can support."""
    from eloledger.rating.bt import fit_bt

    pools = [np.asarray(p, dtype=float) for p in pools if len(p)]
    out = np.full(max(k_max, 1), np.nan)
    out[0] = 0.0
    if not pools:
        return out
    K = min(k_max, min(len(p) for p in pools) - 1)
    if K < 2:
        return out
    W = np.zeros((K, K))
    kk, jj = (a.ravel() for a in np.meshgrid(np.arange(1, K + 1), np.arange(1, K + 1)))
    pairs = jj < kk
    kk, jj = kk[pairs], jj[pairs]
    for pool in pools:
        fits = kk + jj <= len(pool)
        p = pair_wins(pool, kk[fits], jj[fits])
        np.add.at(W, (kk[fits] - 1, jj[fits] - 1), p)
        np.add.at(W, (jj[fits] - 1, kk[fits] - 1), 1.0 - p)
    fit = fit_bt(W, prior=0.0)
    theta = fit.theta - fit.theta[0]
    out[:K] = ELO_PER_LN * theta
    return out
