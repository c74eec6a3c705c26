"""Confidence intervals by bootstrapping **tasks**, not single comparisons.

Comparisons from one task share its difficulty, its reference answer and often its samples, so
they are correlated; resampling single comparisons treats them as independent and gives
intervals that are far too narrow. We resample whole tasks with replacement and refit.

Speed: each task's contribution to the win matrix is computed once, as a sparse task × pair
matrix M. A bootstrap round is then just a vector of task multiplicities c (a bincount of the
drawn task ids), its win matrix is c·M, and many rounds are one sparse-dense product followed
by one batched, warm-started Newton fit (``fit_bt_batch``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from eloledger.rating.bt import (
    FALLBACK_PRIOR,
    aggregate,
    fit_bt,
    fit_bt_batch,
    hessian_factor,
    row_weights,
    to_elo,
)
from eloledger.rating.resample import multiplicities, quantile_interval, resample_indices

_CHUNK_CELLS = 4_000_000  # floats per chunk of rounds (bounds memory for big problems)
_TOL = 1e-6  # θ precision per round (4e-5 Elo): far below any interval's resolution
_INFLUENCE_CELLS = 4_000_000  # units x players kept dense for the BCa acceleration (32 MB)
_CLOSURE_MAX_N = 24  # up to this many players, check the MLE condition by batched closure


@dataclass(frozen=True)
class BootstrapResult:
    """Per-round Elo samples (rounds × players, anchored) and percentile intervals."""

    elo_samples: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    level: float = 0.95
    rounds_without_mle: int = 0
    warnings: list[str] = field(default_factory=list)


def bootstrap(
    comparisons,
    *,
    rounds: int = 1000,
    seed: int | None = 0,
    prior: float = 0.0,
    anchor: int = 0,
    task_weight: str | None = None,
    level: float = 0.95,
    unit: str = "task",
    theta0: np.ndarray | None = None,
) -> BootstrapResult:
    """Resample ``unit`` ("task", or "comparison" for the naive contrast) with replacement
    ``rounds`` times, refit, and return BCa intervals of Elo (:func:`bca_interval`) and
    percentile intervals of rank (1 = best), the rounds carrying the small-sample widening of
    :func:`small_sample_widen`.

    Reproducible: the same ``seed`` gives the same samples. If the full data needed the
    fallback prior, every round uses it; if only some resamples lose the MLE (a player never
    loses in that resample), those rounds use ``FALLBACK_PRIOR`` and are counted in a warning.
    """
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must be in (0, 1)")
    n = comparisons.n_players
    W_full = aggregate(comparisons, task_weight=task_weight)
    if theta0 is None:  # callers passing theta0 pass the prior their fit actually used
        main = fit_bt(W_full, prior=prior)
        theta0, prior = main.theta, main.prior
    M, keys = _unit_pair_matrix(comparisons, task_weight, unit)
    # One Hessian factor of the full data serves every round (resamples are close to it).
    factor = hessian_factor(W_full, np.asarray(theta0, dtype=np.float64), prior) if n > 1 else None
    U = M.shape[0]
    MT = M.T.tocsr()
    rng = np.random.default_rng(seed)
    chunk = int(max(1, min(rounds, _CHUNK_CELLS // max(U, n * n))))
    thetas = np.empty((rounds, n))
    no_mle = not_converged = 0
    for start in range(0, rounds, chunk):
        size = min(chunk, rounds - start)
        counts = multiplicities(resample_indices(rng, U, size), U).astype(np.float64)
        flat = np.asarray(MT @ counts.T).T  # size × pairs
        Wb = np.zeros((size, n * n))
        Wb[:, keys] = flat
        Wb = Wb.reshape(size, n, n)
        ok = np.ones(size, dtype=bool) if prior > 0 else _mle_exists(Wb)
        th = np.empty((size, n))
        if ok.any():
            th[ok], conv = fit_bt_batch(Wb[ok], prior=prior, theta0=theta0, tol=_TOL, factor=factor)
            not_converged += int((~conv).sum())
        if not ok.all():
            no_mle += int((~ok).sum())
            th[~ok], conv = fit_bt_batch(Wb[~ok], prior=FALLBACK_PRIOR, theta0=theta0, tol=_TOL)
            not_converged += int((~conv).sum())
        thetas[start : start + size] = th
    estimate = to_elo(theta0, anchor)
    samples = small_sample_widen(to_elo(thetas, anchor), estimate, U, level)
    accel = np.zeros(n)
    if factor is not None:
        pulls = _unit_influence(M, keys, np.asarray(theta0, dtype=np.float64), factor)
        accel = acceleration(pulls - pulls[:, [anchor]])
    lo, hi = bca_interval(samples, estimate, accel, level)
    rlo, rhi = quantile_interval(rank_samples(samples), level, axis=0, method="inverted_cdf")
    warnings = []
    if no_mle:
        warnings.append(
            f"{no_mle} of {rounds} bootstrap rounds had a player or group that never lost (or "
            f"never won) in the resample; those rounds used the fallback prior {FALLBACK_PRIOR:g}"
        )
    if not_converged:
        warnings.append(f"{not_converged} of {rounds} bootstrap fits did not converge")
    return BootstrapResult(
        samples, lo, hi, rlo.astype(int), rhi.astype(int), level, no_mle, warnings
    )


def small_sample_widen(
    samples: np.ndarray, estimate: np.ndarray, units: int, level: float
) -> np.ndarray:
    """Rounds spread about the estimate by sqrt(G/(G-1)) · t_{G-1} / z (G resampled units).

    Percentile intervals of a task bootstrap under-cover with few tasks (0.90 at 10 tasks for a
    nominal 0.95): the bootstrap's variance is the plug-in one, (G-1)/G of the unbiased, and the
    normal quantile ignores that the variance is estimated from G clusters. The same two
    corrections the cluster-robust sandwich uses (Cameron & Miller 2015; the t quantile with
    G - 1 degrees of freedom) are applied to the rounds, so intervals, rank intervals and every
    figure derived from the rounds agree; with hundreds of tasks the factor is about 1.
    """
    from scipy.special import ndtri, stdtrit

    if units < 2:
        return samples
    z = float(ndtri(0.5 + level / 2.0))
    factor = math.sqrt(units / (units - 1.0)) * float(stdtrit(units - 1, 0.5 + level / 2.0)) / z
    return estimate + (samples - estimate) * factor


def bca_interval(
    samples: np.ndarray, estimate: np.ndarray, accel: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bias-corrected and accelerated (BCa) percentile interval of each column of ``samples``
    (Efron 1987; Efron & Tibshirani 1993, ch. 14).

    Why not the plain percentile: a Bradley–Terry MLE from few games spreads the ratings out,
    and its bootstrap rounds spread them out again, so the percentile interval sits too far
    from the anchor and, with the small-sample widening, still covered 0.926-0.936 with 8
    players at 5-30 tasks (bench/study_intervals.py). BCa moves the percentile levels by the
    rounds' median bias z0 = Φ⁻¹(share of rounds below the estimate) and by the skew of the
    units' pulls (``accel``, :func:`acceleration`). Both are unchanged by a widening about the
    estimate, so the widened rounds can be used directly.
    """
    from scipy.special import ndtr, ndtri

    rounds = samples.shape[0]
    below = (samples < estimate).mean(0) + 0.5 * (samples == estimate).mean(0)
    z0 = ndtri(np.clip(below, 1.0 / rounds, 1.0 - 1.0 / rounds))
    a = np.clip(accel, -1.0 / 6.0, 1.0 / 6.0)  # 1/6: a single unit carrying all the pull
    z = float(ndtri(0.5 + level / 2.0))
    ends = []
    for zz in (-z, z):
        shifted = z0 + zz
        ends.append(ndtr(z0 + shifted / (1.0 - a * shifted)))
    ordered = np.sort(samples, axis=0)
    return _column_quantile(ordered, ends[0]), _column_quantile(ordered, ends[1])


def _column_quantile(ordered: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantile q[k] of sorted column k (numpy's default linear interpolation), all at once."""
    position = np.clip(q, 0.0, 1.0) * (ordered.shape[0] - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, ordered.shape[0] - 1)
    cols = np.arange(ordered.shape[1])
    low, high = ordered[below, cols], ordered[above, cols]
    return low + (position - below) * (high - low)


def acceleration(pulls: np.ndarray) -> np.ndarray:
    """BCa's acceleration per column from the units' first-order pulls (units x players):
    Σu³ / (6 (Σu²)^1.5), the infinitesimal-jackknife form (0 where nothing moves)."""
    pulls = pulls - pulls.mean(0)
    second = (pulls**2).sum(0)
    third = (pulls**3).sum(0)
    out = np.zeros(pulls.shape[1])
    moving = second > 0
    out[moving] = third[moving] / (6.0 * second[moving] ** 1.5)
    return out


def _unit_influence(M: csr_matrix, keys: np.ndarray, theta: np.ndarray, factor) -> np.ndarray:
    """Each resampled unit's first-order pull on θ (units x players): A⁻¹·g_u, g_u the unit's
    score at θ̂ (its wins minus expected wins per player, read off its row of M) and A the
    Hessian of the fit (``factor``: its Cholesky factor). The same pulls as
    ``sandwich.task_influence`` when the units are tasks."""
    from scipy.linalg import cho_solve
    from scipy.special import expit

    n = theta.size
    if M.shape[0] * n > _INFLUENCE_CELLS:  # fold units into groups: sums of independent units
        groups = max(_INFLUENCE_CELLS // n, 2)
        units = np.arange(M.shape[0])
        M = (
            csr_matrix((np.ones(units.size), (units % groups, units)), shape=(groups, units.size))
            @ M
        )
    i, j = np.divmod(keys, n)
    # Row u of M holds W_u[i, j] (i's wins over j in unit u); i's score from pair (i, j) is
    # W_u[i, j]·(1 − p_ij) − W_u[j, i]·p_ij = W_u[i, j] − (W_u[i, j] + W_u[j, i])·p_ij, and
    # summed over the directed entries that is Σ_entries W_u[i, j]·(1 − p_ij) for i minus the
    # same amount for j.
    resid = M.multiply(1.0 - expit(theta[i] - theta[j])[None, :]).tocsr()
    pick_i = csr_matrix((np.ones(keys.size), (np.arange(keys.size), i)), shape=(keys.size, n))
    pick_j = csr_matrix((np.ones(keys.size), (np.arange(keys.size), j)), shape=(keys.size, n))
    scores = np.asarray((resid @ pick_i - resid @ pick_j).todense())
    return cho_solve(factor, scores.T, check_finite=False).T


def _unit_pair_matrix(
    comparisons, task_weight: str | None, unit: str
) -> tuple[csr_matrix, np.ndarray]:
    """Sparse (units × pairs) contributions to W, and each pair's flat index i·n+j."""
    n = comparisons.n_players
    w = row_weights(comparisons, task_weight)
    if unit == "task":
        units, U = comparisons.task, comparisons.n_tasks
    elif unit == "comparison":
        units, U = np.arange(len(comparisons)), len(comparisons)
    else:
        raise ValueError("unit must be 'task' or 'comparison'")
    i, j, out = comparisons.i, comparisons.j, comparisons.outcome
    flat = np.concatenate([i * n + j, j * n + i])
    vals = np.concatenate([w * out, w * (1.0 - out)])
    rows = np.concatenate([units, units])
    keep = vals != 0
    keys, cols = np.unique(flat[keep], return_inverse=True)
    M = csr_matrix((vals[keep], (rows[keep], cols)), shape=(U, keys.size))
    M.sum_duplicates()
    return M, keys


def _mle_exists(Wb: np.ndarray) -> np.ndarray:
    """Per round: is the directed win graph strongly connected (the MLE condition)?

    Small n: batched transitive closure by repeated squaring of the reachability matrices
    (a few BLAS calls for all rounds); large n: scipy's strongly connected components per round.
    """
    R, n, _ = Wb.shape
    positive = Wb > 0
    # Quick reject: anyone with no wins or no losses.
    quick = positive.any(2).all(1) & positive.any(1).all(1)
    out = np.zeros(R, dtype=bool)
    todo = np.flatnonzero(quick)
    if todo.size == 0:
        return out
    if n <= _CLOSURE_MAX_N:
        reach = (positive[todo] | np.eye(n, dtype=bool)).astype(np.float32)
        for _ in range(max(1, math.ceil(math.log2(n)))):
            reach = (reach @ reach > 0).astype(np.float32)
        out[todo] = reach.all((1, 2))
        return out
    for r in todo:
        k, _ = connected_components(csr_matrix(positive[r]), directed=True, connection="strong")
        out[r] = k == 1
    return out


def rank_samples(samples: np.ndarray) -> np.ndarray:
    """Rank of each player in each round: 1 + the number of players with a strictly higher
    Elo (so equal ratings share a rank, as in the point estimate's rank)."""
    R, n = samples.shape
    order = np.argsort(-samples, axis=1, kind="stable")
    ordered = np.take_along_axis(samples, order, axis=1)
    new = np.ones((R, n), dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.where(new, np.arange(n), 0)
    np.maximum.accumulate(first, axis=1, out=first)
    ranks = np.empty((R, n), dtype=np.int64)
    np.put_along_axis(ranks, order, first + 1, axis=1)
    return ranks
