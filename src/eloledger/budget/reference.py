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
from typing import Any

import numpy as np
from scipy.special import comb, gammaln

ELO_PER_LN = 400.0 / np.log(10.0)


def _nested(
    a: np.ndarray,
    b: np.ndarray,
    k: np.ndarray,
    j: np.ndarray,
    choose: Any = comb,
    join: Any = np.multiply,
) -> np.ndarray:
    """Ways to draw disjoint (A of size k inside the a smallest, B of size j inside the b
    smallest); the two sets are nested, so the smaller one is drawn first. Broadcasts.
    ``choose``/``join``: C(n, r) and how two counts make one (ln C and ``np.add``: its log)."""
    return np.where(
        b <= a, join(choose(b, j), choose(a - j, k)), join(choose(a, k), choose(b - k, j))
    )


def _log_comb(log_factorial: np.ndarray, n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """ln C(n, k) from a table of ln m! (whole n and k), and -inf where C(n, k) is 0."""
    valid = (k >= 0) & (k <= n)
    n, k = np.where(valid, n, 0).astype(np.intp), np.where(valid, k, 0).astype(np.intp)
    return np.where(valid, log_factorial[n] - log_factorial[k] - log_factorial[n - k], -np.inf)


# Every count below is at most the multinomial n! / (j! k! (n-j-k)!) <= 3**n: up to this pool
# size the counts fit a double and are used as they are; past it they pass 1e308 (a session
# of a thousand samples made ``curve`` fail), and each is taken over the total in logarithms.
_COUNTS_FIT = 600


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
    if n <= _COUNTS_FIT:
        total = (comb(n, j) * comb(n - j, k))[0]

        def ways(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return _nested(a, b, k, j)
    else:
        log_factorial = gammaln(np.arange(n + 1) + 1.0)

        def log_comb(m: np.ndarray, r: np.ndarray) -> np.ndarray:
            return _log_comb(log_factorial, m, r)

        log_total = log_comb(np.asarray(float(n)), j) + log_comb(n - j, k)
        total = np.ones(k.shape[1])

        def ways(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # as a share of the total
            return np.exp(_nested(a, b, k, j, log_comb, np.add) - log_total)

    below = ways(less, less)
    upto_less = ways(upto, less)  # (once: the wins and the ties both take it)
    win = upto_less - below
    tie = ways(upto, upto) - upto_less - ways(less, upto) + below
    return ((win.sum(0) + 0.5 * tie.sum(0)) / total).astype(float)


def pair_win(pool: np.ndarray, k: int, j: int) -> float:
    """:func:`pair_wins` for one pair."""
    return float(pair_wins(pool, np.array([k]), np.array([j]))[0])


# Up to this many samples every best-of-k from 1 to K is a player (K(K-1)/2 pairs); past it,
# only the k a curve asks for are (a session of 1,000 samples would be 500k pairs, each
# counted over every distinct score of every task, and a 1000 x 1000 fit).
ALL_K_UP_TO = 64


def best_of_k_gains(
    pools: Sequence[np.ndarray], k_max: int, asked: Sequence[int] = ()
) -> np.ndarray:
    """Elo of best-of-k over best-of-1 for k = 1..K (K ≤ k_max, limited by the smallest pool:
    k + 1 samples must fit), from one pool of scored samples per task. Entry k-1 is best-of-k;
    NaN past what the pools can support. When K is over :data:`ALL_K_UP_TO`, the players are
    best-of-1 and the k in ``asked`` (the others stay NaN): tie-free scores give the same
    400·log10(k) whatever the players; with ties the fit is over fewer best-of-k."""
    from eloledger.rating.bt import fit_bt

    pools = [np.asarray(p, dtype=float) for p in pools if len(p)]
    out = np.full(max(k_max, 1), np.nan)
    out[0] = 0.0
    if not pools:
        return out
    K = min(k_max, min(len(p) for p in pools) - 1)
    if K < 2:
        return out
    if K <= ALL_K_UP_TO:
        players = np.arange(1, K + 1)
    else:
        players = np.unique([1, *(k for k in asked if 2 <= k <= K)])
    if len(players) < 2:
        return out
    W = np.zeros((len(players), len(players)))
    a, b = (x.ravel() for x in np.meshgrid(np.arange(len(players)), np.arange(len(players))))
    pairs = b < a  # (a, b): indices into players, the first the larger k
    a, b = a[pairs], b[pairs]
    kk, jj = players[a], players[b]
    for pool in pools:
        fits = kk + jj <= len(pool)
        p = pair_wins(pool, kk[fits], jj[fits])
        np.add.at(W, (a[fits], b[fits]), p)
        np.add.at(W, (b[fits], a[fits]), 1.0 - p)
    fit = fit_bt(W, prior=0.0)
    out[players - 1] = ELO_PER_LN * (fit.theta - fit.theta[0])
    return out
