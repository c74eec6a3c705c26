"""Length-controlled Elo: Bradley–Terry with a term for the answers' relative length.

LLM judges prefer longer answers, so more tokens can buy a better score without a better
answer. The model (the AlpacaEval 2.0 length-controlled form, on log tokens):

    P(a beats b) = σ(θa − θb + β·tanh(Δ/s)),   Δ = ln a_tokens − ln b_tokens,

with s the root mean square of Δ over the comparisons that carry lengths (the RMS, not the
standard deviation: writing a row as winner/loser or as a/b flips Δ's sign, and the scale must
not depend on it). θ is then each player's strength *at equal length* (``lc_elo``), and β —
reported in Elo points as ``length_coef`` — is the **length–outcome association**: how much more
often the longer answer wins beyond what the players' ratings explain (tanh saturates, so
padding an answer tenfold cannot buy unbounded Elo). It is *not* by itself a judge's length
bias: when better answers are also longer (a judge with no length bias at all), β is positive
and ``lc_elo`` removes part of a real gap (Dubois et al. 2024 make the same caveat). When
answer lengths barely vary within each player, β is nearly a function of who plays and is
weakly identified: a warning says so. Comparisons without lengths get Δ = 0: they
inform θ but say nothing about β. Token counts of 0 are read as 1 (an empty answer).

The fit is exact maximum likelihood by damped Newton on (θ, β), row by row (the length term
varies per comparison, so the win matrix is not enough); intervals are the task-clustered
sandwich of ``rating.sandwich`` with β as one more parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.special import expit, log_expit

from eloledger.errors import UserError
from eloledger.rating.bt import ELO_SCALE, aggregate, fit_bt, row_weights, to_elo
from eloledger.rating.sandwich import SandwichResult, intervals_from_root, sandwich_root, task_meat

_SAFE_STEP = 0.5


@dataclass(frozen=True)
class LengthControlled:
    """Anchored length-controlled Elo (with intervals) and the length coefficient."""

    lc: SandwichResult  # ci_low/ci_high/rank intervals of lc_elo
    lc_elo: np.ndarray
    beta: float  # θ units
    beta_se: float
    scale: float  # s, the standard deviation of Δ
    rows_with_tokens: int
    converged: bool
    warnings: list[str] = field(default_factory=list)

    def length_coef(self) -> dict[str, float | int]:
        """β in Elo points with its interval, as reported in JSON."""
        z = self.lc.quantile
        elo, se = ELO_SCALE * self.beta, ELO_SCALE * self.beta_se
        return {
            "elo": elo,
            "ci_low": elo - z * se,
            "ci_high": elo + z * se,
            "se": se,
            "s": self.scale,
            "comparisons_with_tokens": self.rows_with_tokens,
            "intervals": "sandwich",
        }


def length_covariate(comparisons) -> tuple[np.ndarray, float, int]:
    """Per comparison x = tanh(Δ/s) (0 where a length is unknown), s and the rows with both
    lengths. UserError when no comparison carries both lengths or they never differ."""
    src = comparisons.source
    if comparisons.a_tokens is None or comparisons.b_tokens is None:
        raise UserError(
            f"{src}: no a_tokens,b_tokens columns, so there is no length to control for",
            fix="add a_tokens,b_tokens (output tokens of each side) or drop --length-control",
        )
    a, b = comparisons.a_tokens, comparisons.b_tokens
    known = np.isfinite(a) & np.isfinite(b)
    if not known.any():
        raise UserError(
            f"{src}: no comparison has both a_tokens and b_tokens",
            fix="fill in the output tokens of each side or drop --length-control",
        )
    delta = np.zeros(len(comparisons))
    delta[known] = np.log(np.maximum(a[known], 1.0)) - np.log(np.maximum(b[known], 1.0))
    s = float(np.sqrt(np.mean(delta[known] ** 2)))  # RMS: the same for either row orientation
    if not (s > 0.0 and float(np.std(delta[known])) > 0.0):
        raise UserError(
            f"{src}: every comparison has the same length ratio, so a length effect cannot be "
            "told apart from the ratings",
            fix="drop --length-control",
        )
    return np.tanh(delta / s), s, int(known.sum())


WEAK_WITHIN_SHARE = 0.05


def _within_share(comparisons) -> float | None:
    """Share of the variance of answers' log tokens that lies within players (None when no
    lengths are known): near 0 means lengths are a player trait, not an answer's."""
    a, b = comparisons.a_tokens, comparisons.b_tokens
    players = np.concatenate([comparisons.i, comparisons.j])
    logs = np.log(np.maximum(np.concatenate([a, b]), 1.0))
    ok = np.isfinite(logs)
    if ok.sum() < 2:
        return None
    players, logs = players[ok], logs[ok]
    total = float(np.var(logs))
    if total <= 0:
        return None
    count = np.bincount(players)
    mean = np.bincount(players, logs) / np.maximum(count, 1)
    within = float(np.mean((logs - mean[players]) ** 2))
    return within / total


def length_controlled(
    comparisons,
    *,
    anchor: int,
    prior: float = 0.0,
    task_weight: str | None = None,
    level: float = 0.95,
    seed: int | None = 0,
) -> LengthControlled:
    """Fit the length-controlled model and its task-clustered intervals (the function the
    CLI and the TUI call). ``prior`` as in ``fit_bt``; when the plain MLE does not exist the
    raw fit's fallback prior is used here too."""
    x, s, known = length_covariate(comparisons)
    n = comparisons.n_players
    w = row_weights(comparisons, task_weight)
    raw = fit_bt(aggregate(comparisons, task_weight=task_weight), prior=prior)
    prior = raw.prior
    i, j, y = comparisons.i, comparisons.j, comparisons.outcome
    params, converged = _newton(i, j, y, w, x, n, prior, raw.theta)
    theta, beta = params[:n], float(params[n])
    resid = w * (y - expit(theta[i] - theta[j] + beta * x))
    meat, clusters = task_meat(comparisons.task, i, j, resid, comparisons.n_tasks, n + 1, extra=x)
    _, factor = _gradient_factor(i, j, y, w, x, n, prior, params)
    root = sandwich_root(factor, meat)
    lc = intervals_from_root(theta, root[:n], anchor, level, seed, clusters)
    warnings = [] if converged else ["length-controlled fit did not converge"]
    weak = _within_share(comparisons)
    if weak is not None and weak < WEAK_WITHIN_SHARE:
        warnings.append(
            f"answer lengths barely vary within players ({weak:.0%} of the variance of log "
            "tokens is within players): the length coefficient is weakly identified -- it "
            "nearly restates who played -- so read lc_elo with care"
        )
    missing = len(comparisons) - known
    if missing:
        warnings.append(
            f"{missing} of {len(comparisons)} comparisons lack a_tokens/b_tokens; they count "
            "for the length-controlled ratings as if both answers had the same length"
        )
    return LengthControlled(
        lc=lc,
        lc_elo=to_elo(theta, anchor),
        beta=beta,
        beta_se=float(np.linalg.norm(root[n])),
        scale=s,
        rows_with_tokens=known,
        converged=converged,
        warnings=warnings,
    )


def _newton(i, j, y, w, x, n: int, prior: float, theta0: np.ndarray, tol: float = 1e-10):
    """Damped Newton on (θ, β) from (θ0, 0); returns (params, converged)."""
    params = np.append(np.asarray(theta0, dtype=np.float64), 0.0)
    for _ in range(100):
        grad, factor = _gradient_factor(i, j, y, w, x, n, prior, params)
        step = cho_solve(factor, grad, check_finite=False)
        size = float(np.max(np.abs(step)))
        t = 1.0
        if size > _SAFE_STEP:
            f = _nll(i, j, y, w, x, n, prior, params)
            limit = f + 1e-12 * abs(f)
            while t > 1e-8 and _nll(i, j, y, w, x, n, prior, params - t * step) > limit:
                t *= 0.5
        params = params - t * step
        if t * size < tol:
            if prior == 0.0:
                params[:n] -= params[:n].mean()
            return params, True
    return params, False


def _nll(i, j, y, w, x, n: int, prior: float, params: np.ndarray) -> float:
    d = params[i] - params[j] + params[n] * x
    ll = w * (y * log_expit(d) + (1.0 - y) * log_expit(-d))
    return float(-ll.sum() + 0.5 * prior * params[:n] @ params[:n])


def _gradient_factor(i, j, y, w, x, n: int, prior: float, params: np.ndarray):
    """Gradient of the negative log-likelihood and the Cholesky factor of its Hessian (with
    the gauge term 11ᵀ/n on θ when there is no prior, as in ``fit_bt``)."""
    theta, beta = params[:n], params[n]
    p = expit(theta[i] - theta[j] + beta * x)
    r = w * (y - p)
    v = w * p * (1.0 - p)
    grad = np.empty(n + 1)
    grad[:n] = -(np.bincount(i, r, minlength=n) - np.bincount(j, r, minlength=n)) + prior * theta
    grad[n] = -float(r @ x)
    pair = np.bincount(i * n + j, v, minlength=n * n).reshape(n, n)
    pair += pair.T
    H = np.empty((n + 1, n + 1))
    H[:n, :n] = -pair
    H[np.arange(n), np.arange(n)] = pair.sum(1) + prior
    if prior == 0.0:
        H[:n, :n] += 1.0 / n
    vx = v * x
    cross = np.bincount(i, vx, minlength=n) - np.bincount(j, vx, minlength=n)
    H[:n, n] = cross
    H[n, :n] = cross
    H[n, n] = float(vx @ x) + 1e-12
    try:
        return grad, cho_factor(H, check_finite=False)
    except LinAlgError:
        raise UserError(
            "the length-controlled fit is singular (the length term cannot be told apart "
            "from the ratings on these comparisons)",
            fix="drop --length-control, or add comparisons with varied lengths",
        ) from None
