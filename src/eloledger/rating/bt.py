"""Bradley–Terry on aggregated win counts: exact maximum likelihood by damped Newton.

The model: P(i beats j) = 1 / (1 + exp(θj - θi)). All the likelihood needs is the n×n matrix
``W[i, j]`` of (weighted, soft) wins of i over j, so the comparisons are aggregated once with
``np.bincount`` and the fit never looks at single rows again. Newton's method on that matrix
converges in a handful of steps, and its Cholesky factor is reused while steps keep shrinking
fast, which is what makes the "exact MLE to 0.01 Elo" promise cheap (we converge to ~1e-8 Elo).
Large steps backtrack until the (convex) negative log-likelihood decreases.

When the maximum-likelihood estimate does not exist — the comparison graph is disconnected, or
some player (or group of players) never loses or never wins, i.e. the directed "beat" graph is
not strongly connected — some θ would run off to ±∞ and any finite answer would be arbitrary.
We then say so in warnings naming the players, and fit with a small Gaussian prior
(``FALLBACK_PRIOR``) instead: every rating stays finite, the players that caused it sit a
bounded distance from the others, and the caller can choose a different prior explicitly.
Those finite numbers are the prior's, not the data's: ``rating.identify`` says which contrasts
the data identify (Hunter 2004: the MLE exists iff the beat graph is strongly connected), and
the Elo table reports one-sided bounds or no Elo for the rest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, log_expit

from eloledger.errors import UserError

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of θ
ELO_BASE = 1000.0
# Gaussian prior (penalty prior/2 · Σθ², i.e. θ ~ N(0, 1/prior)) used only when the MLE does
# not exist: sd ≈ 3.2 in θ ≈ 550 Elo, weak next to any real amount of data.
FALLBACK_PRIOR = 0.1
MAX_PLAYERS = 5_000  # dense n×n matrices (a few 200 MB arrays at the limit) and O(n³) factors
_SAFE_STEP = 0.5  # Newton steps up to this (in θ) are taken whole, larger ones backtrack


@dataclass(frozen=True)
class BTResult:
    """A fit: θ (natural-log scale, mean zero), whether Newton converged, and why the fit
    may not be the plain MLE (``warnings``; ``prior`` is the prior actually used)."""

    theta: np.ndarray
    converged: bool
    iterations: int
    warnings: list[str] = field(default_factory=list)
    prior: float = 0.0
    mle_exists: bool = True


def aggregate(
    comparisons,
    *,
    task_weight: str | None = None,
    tasks_subset: np.ndarray | Sequence[int] | None = None,
) -> np.ndarray:
    """The n×n win matrix ``W[i, j]`` = Σ weight·outcome of i over j (soft outcomes split).

    ``task_weight="equal"`` scales each task's comparisons so their weights sum to 1 (every task
    weighs the same however many comparisons it produced); ``None``/``"none"`` keeps the given
    weights. ``tasks_subset`` is an array of task indices; repeats count repeatedly (that is how
    a bootstrap resample is expressed) and tasks not listed are left out.
    """
    if comparisons.n_players > MAX_PLAYERS:
        raise UserError(
            f"{comparisons.source}: {comparisons.n_players:,} players; the dense Bradley–Terry "
            f"fit handles up to {MAX_PLAYERS:,}",
            fix="rate fewer players at a time (e.g. one comparisons file per pool)",
        )
    w = row_weights(comparisons, task_weight)
    if tasks_subset is not None:
        mult = np.bincount(np.asarray(tasks_subset, dtype=np.int64), minlength=comparisons.n_tasks)
        w = w * mult[comparisons.task]
    return _pairs_to_matrix(
        comparisons.i, comparisons.j, comparisons.outcome, w, comparisons.n_players
    )


def row_weights(comparisons, task_weight: str | None) -> np.ndarray:
    """Per-comparison weights after the task weighting policy."""
    w = comparisons.weight.astype(np.float64, copy=True)
    if task_weight in (None, "none"):
        return w
    if task_weight != "equal":
        raise ValueError(f"task_weight must be 'equal' or 'none', not {task_weight!r}")
    per_task = np.bincount(comparisons.task, w, minlength=comparisons.n_tasks)
    denom = per_task[comparisons.task]
    return np.divide(w, denom, out=np.zeros_like(w), where=denom > 0)


def _pairs_to_matrix(i, j, outcome, w, n: int) -> np.ndarray:
    flat = np.bincount(i * n + j, w * outcome, minlength=n * n)
    flat += np.bincount(j * n + i, w * (1.0 - outcome), minlength=n * n)
    return flat.reshape(n, n)


def to_elo(theta: np.ndarray, anchor_index: int) -> np.ndarray:
    """Elo = 1000 + 400·(θ − θ_anchor)/ln 10: the anchor sits at exactly 1000."""
    theta = np.asarray(theta, dtype=np.float64)
    return ELO_BASE + ELO_SCALE * (theta - theta[..., anchor_index, None])


def diagnose(W: np.ndarray, players: Sequence[str] | None = None) -> list[str]:
    """Why the MLE of W does not exist ([] when it does): disconnected groups, players who
    never win or never lose, or a group that beats (or loses to) everyone outside it."""
    n = W.shape[0]
    names = list(players) if players is not None else [f"#{k}" for k in range(n)]
    if n < 2 or _strongly_connected(W > 0):
        return []
    beat = csr_matrix(W > 0)
    n_strong, strong = connected_components(beat, directed=True, connection="strong")
    if n_strong == 1:
        return []
    out: list[str] = []
    games = W.sum(0) + W.sum(1)
    idle = np.flatnonzero(games <= 0)
    if idle.size:
        out.append(f"no comparisons for: {_list(names, idle)}")
    n_weak, weak = connected_components(beat, directed=True, connection="weak")
    if n_weak - idle.size > 1:
        groups = [np.flatnonzero(weak == c) for c in range(n_weak)]
        groups = [g for g in groups if games[g].sum() > 0]
        shown = "; ".join(f"{{{_list(names, g, 4)}}}" for g in groups[:4])
        out.append(
            f"comparison graph is disconnected ({len(groups)} groups never compared with each "
            f"other: {shown}); Elo differences between groups are not identified"
        )
    wins = W.sum(1)
    losses = W.sum(0)
    never_lose = np.flatnonzero((losses <= 0) & (games > 0))
    never_win = np.flatnonzero((wins <= 0) & (games > 0))
    if never_lose.size:
        out.append(f"never lose: {_list(names, never_lose)} (their MLE is +infinity)")
    if never_win.size:
        out.append(f"never win: {_list(names, never_win)} (their MLE is -infinity)")
    if not never_lose.size and not never_win.size and n_weak - idle.size <= 1:
        out.append(
            "some group of players never loses to the rest (the win graph is not strongly "
            "connected); its gap to the rest is +infinity"
        )
    return out


def _strongly_connected(beat: np.ndarray) -> bool:
    """Whether every player reaches every other along ``beat[i, j]`` (i beat j) edges: a
    breadth-first search from player 0 forwards and backwards on the dense matrix, O(n²)
    with no sparse copy (the common case, where the MLE exists, costs next to nothing)."""
    n = beat.shape[0]
    for forward in (True, False):
        seen = np.zeros(n, dtype=bool)
        seen[0] = True
        frontier = np.zeros(1, dtype=np.intp)
        while frontier.size:
            reach = beat[frontier].any(0) if forward else beat[:, frontier].any(1)
            reach &= ~seen
            seen |= reach
            frontier = np.flatnonzero(reach)
        if not seen.all():
            return False
    return True


def _list(names: Sequence[str], idx: np.ndarray, limit: int = 8) -> str:
    shown = ", ".join(names[int(k)] for k in idx[:limit])
    return shown + (f" and {idx.size - limit} more" if idx.size > limit else "")


def fit_bt(
    W: np.ndarray,
    *,
    prior: float = 0.0,
    theta0: np.ndarray | None = None,
    players: Sequence[str] | None = None,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> BTResult:
    """Fit θ to the win matrix W. ``prior`` > 0 adds the L2 penalty prior/2·Σθ² (a Gaussian
    prior N(0, 1/prior)); with prior 0 the result is the exact MLE, centred to mean zero.
    If the MLE does not exist, warns and falls back to ``FALLBACK_PRIOR`` (see module doc)."""
    W = np.asarray(W, dtype=np.float64)
    n = W.shape[0]
    if W.ndim != 2 or W.shape != (n, n):
        raise ValueError("W must be a square matrix")
    if not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError("W must hold finite, non-negative win counts")
    if prior < 0:
        raise ValueError("prior must be >= 0")
    W = W.copy()
    np.fill_diagonal(W, 0.0)
    warnings: list[str] = []
    mle_exists = True
    if prior == 0.0:
        problems = diagnose(W, players)
        if problems:
            mle_exists = False
            warnings.extend(problems)
            warnings.append(
                f"the maximum-likelihood ratings do not exist; fitted with a weak Gaussian prior "
                f"(--prior {FALLBACK_PRIOR:g}) instead, so those ratings are shrunk toward the "
                "mean — add comparisons or choose --prior explicitly"
            )
            prior = FALLBACK_PRIOR
    if n == 1:
        return BTResult(np.zeros(1), True, 0, warnings, prior, mle_exists)
    theta = None if theta0 is None else np.asarray(theta0, dtype=np.float64).copy()
    theta, converged, iterations = _newton(W, prior, theta, tol, max_iter)
    if not converged:
        warnings.append(f"Bradley–Terry fit did not converge in {max_iter} Newton steps")
    if prior == 0.0:
        theta = theta - theta.mean()
    return BTResult(theta, converged, iterations, warnings, prior, mle_exists)


def _nll(W: np.ndarray, theta: np.ndarray, prior: float) -> float:
    D = theta[:, None] - theta[None, :]
    mask = W > 0
    return float(-(W[mask] * log_expit(D[mask])).sum() + 0.5 * prior * theta @ theta)


def _newton(
    W: np.ndarray, prior: float, theta: np.ndarray | None, tol: float, max_iter: int
) -> tuple[np.ndarray, bool, int]:
    """Damped Newton with factorisation reuse.

    The Hessian is factorised (Cholesky, O(n³)) only while it matters: once steps shrink,
    the last factorisation is reused for further steps (the chord method; each step is then
    O(n²)) as long as every step is at most a tenth of the previous one, else it is refreshed.
    Steps larger than ``_SAFE_STEP`` backtrack until the negative log-likelihood decreases.
    """
    n = W.shape[0]
    N = W + W.T
    wins = W.sum(1)
    if theta is None:  # log-odds of each player's win share: close to the answer, cheap
        theta = np.log((wins + 0.5) / (W.sum(0) + 0.5))
        theta -= theta.mean()
    gauge = 0.0 if prior > 0 else 1.0 / n  # + 11ᵀ/n fixes the free shift when there is no prior
    diag = np.diag_indices(n)
    P = np.empty((n, n))
    NP = np.empty((n, n))
    factor = None
    fresh = False
    previous = math.inf
    for it in range(1, max_iter + 1):
        _win_probability(theta, out=P)
        np.multiply(N, P, out=NP)
        grad = NP.sum(1) - wins + prior * theta
        if factor is None:
            H = np.multiply(NP, P)
            np.subtract(NP, H, out=H)  # V = N·P·(1−P); P(1−P) is symmetric
            dv = H.sum(1)
            np.negative(H, out=H)
            if gauge:
                H += gauge
            H[diag] += dv + prior
            fresh = True
            try:
                factor = cho_factor(H, overwrite_a=True, check_finite=False)
            except LinAlgError:
                factor = None
                step = np.linalg.lstsq(H, grad, rcond=None)[0]
        step = cho_solve(factor, grad, check_finite=False) if factor is not None else step
        size = float(np.max(np.abs(step)))
        t = 1.0
        if size > _SAFE_STEP:
            f = _nll(W, theta, prior)
            while t > 1e-8 and _nll(W, theta - t * step, prior) > f + 1e-12 * abs(f):
                t *= 0.5
        theta = theta - t * step
        if t * size < tol:
            return theta, True, it
        # Far from the optimum, or chord steps that shrink slowly: refresh the Hessian. A step
        # with a fresh factor is not compared with the one before it (that was another matrix).
        if t < 1.0 or size > _SAFE_STEP or (not fresh and size > 0.1 * previous):
            factor = None
        fresh = False
        previous = size
    return theta, False, max_iter


def _win_probability(theta: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """P[i, j] = 1 / (1 + exp(θj − θi)), the chance that i beats j, with numpy's vectorised
    ``exp`` (about 3× faster than ``scipy.special.expit`` on an n×n matrix); written into
    ``out`` when given. A difference past exp's range gives exactly 0 or 1, never NaN."""
    n = theta.shape[0]
    out = np.empty((n, n)) if out is None else out
    np.subtract(theta[None, :], theta[:, None], out=out)
    with np.errstate(over="ignore"):
        np.exp(out, out=out)
    out += 1.0
    np.reciprocal(out, out=out)
    return out


def hessian_factor(W: np.ndarray, theta: np.ndarray, prior: float):
    """Cholesky factor of the negative log-likelihood's Hessian at θ (with the gauge term
    when prior is 0): reused by ``fit_bt_batch`` for matrices close to W."""
    n = W.shape[0]
    N = W + W.T
    P = expit(theta[:, None] - theta[None, :])
    V = N * P * P.T
    H = -V + (0.0 if prior > 0 else 1.0 / n)
    H[np.diag_indices(n)] += V.sum(1) + prior
    return cho_factor(H, check_finite=False)


def fit_bt_batch(
    W: np.ndarray,
    *,
    prior: float,
    theta0: np.ndarray,
    tol: float = 1e-9,
    max_iter: int = 100,
    factor=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit many win matrices at once (shape R×n×n), warm-started from ``theta0`` (n or R×n).

    For bootstrap rounds: numpy's batched ``solve`` does R small Newton systems per call.
    With ``factor`` (``hessian_factor`` of a nearby matrix, e.g. the full data at its fit),
    rounds first take chord steps with that one factor — O(n²) each instead of O(n³) — and
    only rounds where that converges slowly fall back to full Newton steps.
    Every matrix must have an MLE (or prior > 0). Returns (θ of shape R×n, converged mask)."""
    R, n, _ = W.shape
    theta = np.broadcast_to(np.asarray(theta0, dtype=np.float64), (R, n)).copy()
    if factor is not None:
        theta, done = _chord_batch(W, prior, theta, factor, tol, max_iter)
        if not done.all():
            rest = np.flatnonzero(~done)
            theta[rest], ok = fit_bt_batch(
                W[rest], prior=prior, theta0=theta[rest], tol=tol, max_iter=max_iter
            )
            done[rest] = ok
        return theta, done
    N = W + W.transpose(0, 2, 1)
    wins = W.sum(2)
    gauge = 0.0 if prior > 0 else 1.0 / n
    active = np.arange(R)
    converged = np.zeros(R, dtype=bool)
    eye = np.eye(n, dtype=bool)

    def nll(idx: np.ndarray, th: np.ndarray) -> np.ndarray:
        D = th[:, :, None] - th[:, None, :]
        return -(W[idx] * log_expit(D)).sum((1, 2)) + 0.5 * prior * (th * th).sum(1)

    for _ in range(max_iter):
        th = theta[active]
        Na = N[active]
        P = expit(th[:, :, None] - th[:, None, :])
        V = Na * P * P.transpose(0, 2, 1)
        grad = (Na * P).sum(2) - wins[active] + prior * th
        H = gauge - V
        H[:, eye] += V.sum(2) + prior
        step = np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        t = np.ones(active.size)
        cand = th - step
        # Small steps (warm starts near the optimum) are inside Newton's quadratic region and
        # are taken whole; only large steps pay for a backtracking line search.
        big = np.flatnonzero(np.max(np.abs(step), axis=1) > _SAFE_STEP)
        if big.size:
            idx = active[big]
            f0 = nll(idx, th[big])
            tb = np.ones(big.size)
            cb = cand[big]
            fc = nll(idx, cb)
            worse = fc > f0 + 1e-12 * np.abs(f0)
            for _halving in range(40):
                if not worse.any():
                    break
                tb[worse] *= 0.5
                cb[worse] = th[big][worse] - tb[worse, None] * step[big][worse]
                fc[worse] = nll(idx[worse], cb[worse])
                worse = fc > f0 + 1e-12 * np.abs(f0)
            cand[big] = cb
            t[big] = tb
        theta[active] = cand
        done = np.max(np.abs(t[:, None] * step), axis=1) < tol
        converged[active[done]] = True
        active = active[~done]
        if active.size == 0:
            break
    if prior == 0.0:
        theta -= theta.mean(1, keepdims=True)
    return theta, converged


def _chord_batch(
    W: np.ndarray, prior: float, theta: np.ndarray, factor, tol: float, max_iter: int
) -> tuple[np.ndarray, np.ndarray]:
    """Steps θ ← θ − H0⁻¹·∇ with one fixed factor H0 for every matrix; a row stops when its
    step is below ``tol`` (converged) or shrinks by less than half (left for Newton)."""
    R, n = theta.shape
    N = W + W.transpose(0, 2, 1)
    wins = W.sum(2)
    active = np.arange(R)
    done = np.zeros(R, dtype=bool)
    previous = np.full(R, np.inf)
    for _ in range(max_iter):
        th = theta[active]
        P = expit(th[:, :, None] - th[:, None, :])
        grad = (N[active] * P).sum(2) - wins[active] + prior * th
        step = cho_solve(factor, grad.T, check_finite=False).T
        size = np.max(np.abs(step), axis=1)
        good = size <= 0.5 * previous[active]
        good &= size <= _SAFE_STEP
        theta[active[good]] = th[good] - step[good]
        finished = good & (size < tol)
        done[active[finished]] = True
        previous[active] = size
        active = active[good & ~finished]
        if active.size == 0:
            break
    return theta, done
