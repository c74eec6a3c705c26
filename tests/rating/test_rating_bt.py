"""Bradley–Terry: the fit is the exact MLE (vs scipy.optimize and choix) on data with ties and
soft outcomes, the prior is the stated Gaussian, task weighting works, and a missing MLE is
reported and handled instead of returning arbitrary numbers."""

from __future__ import annotations

import choix
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from eloledger.rating.bt import (
    ELO_SCALE,
    FALLBACK_PRIOR,
    aggregate,
    diagnose,
    fit_bt,
    fit_bt_batch,
    hessian_factor,
    to_elo,
)
from eloledger.rating.comparisons import Comparisons

ELO_TOL = 0.01


def soft_data(seed: int, n: int = 9, m: int = 4000) -> Comparisons:
    """Random pairs with hard wins, exact ties (0.5) and soft preferences in (0, 1)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.0, n)
    i = rng.integers(0, n, m)
    j = (i + rng.integers(1, n, m)) % n
    p = expit(theta[i] - theta[j])
    out = (rng.random(m) < p).astype(float)
    kind = rng.random(m)
    out[kind < 0.15] = 0.5
    soft = kind > 0.8
    out[soft] = np.clip(p[soft] + rng.normal(0, 0.2, soft.sum()), 0, 1)
    weight = rng.choice([1.0, 1.0, 2.0, 0.5], m)
    names = np.array([f"p{k}" for k in range(n)])
    return Comparisons.from_arrays(rng.integers(0, 60, m), names[i], names[j], out, weight)


def reference_mle(W: np.ndarray, prior: float = 0.0) -> np.ndarray:
    """scipy.optimize on the plain negative log-likelihood (θ0 pinned at 0 without a prior)."""
    n = W.shape[0]

    def unpack(x: np.ndarray) -> np.ndarray:
        return x if prior > 0 else np.concatenate([[0.0], x])

    def nll(x: np.ndarray) -> tuple[float, np.ndarray]:
        t = unpack(x)
        D = t[:, None] - t[None, :]
        f = -(W * log_expit(D)).sum() + 0.5 * prior * t @ t
        N = W + W.T
        g = (N * expit(D)).sum(1) - W.sum(1) + prior * t
        return f, (g if prior > 0 else g[1:])

    x0 = np.zeros(n if prior > 0 else n - 1)
    res = minimize(
        nll,
        x0,
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000},
    )
    return unpack(res.x)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_mle_matches_scipy_and_choix(seed: int) -> None:
    comps = soft_data(seed)
    assert (comps.outcome == 0.5).any() and (
        (comps.outcome > 0) & (comps.outcome < 1) & (comps.outcome != 0.5)
    ).any()
    W = aggregate(comps)
    fit = fit_bt(W)
    assert fit.converged and fit.warnings == [] and fit.prior == 0.0 and fit.mle_exists
    ours = to_elo(fit.theta, 0)
    ref = to_elo(reference_mle(W), 0)
    assert np.max(np.abs(ours - ref)) < ELO_TOL
    ch = to_elo(choix.ilsr_pairwise_dense(W, alpha=0.0, tol=1e-12, max_iter=100_000), 0)
    assert np.max(np.abs(ours - ch)) < ELO_TOL


def test_gradient_is_zero_at_the_fit() -> None:
    W = aggregate(soft_data(5))
    t = fit_bt(W).theta
    D = t[:, None] - t[None, :]
    grad = ((W + W.T) * expit(D)).sum(1) - W.sum(1)
    assert np.max(np.abs(grad)) < 1e-8 * W.sum()


def test_prior_is_the_stated_gaussian() -> None:
    W = aggregate(soft_data(3, n=6, m=600))
    fit = fit_bt(W, prior=0.7)
    assert fit.prior == 0.7
    assert np.max(np.abs(fit.theta - reference_mle(W, prior=0.7))) * ELO_SCALE < ELO_TOL
    # Shrinkage: the prior pulls ratings toward each other.
    assert np.ptp(fit.theta) < np.ptp(fit_bt(W).theta)


def test_aggregate_soft_counts_and_subset() -> None:
    c = Comparisons.from_arrays(
        ["t1", "t1", "t2"], ["a", "b", "a"], ["b", "a", "b"], [1.0, 0.25, 0.5], [1, 2, 4]
    )
    W = aggregate(c)
    assert W[0, 0] == 0.0 and W[1, 1] == 0.0
    assert W[0, 1] == pytest.approx(1 + 2 * 0.75 + 4 * 0.5)
    assert W[1, 0] == pytest.approx(2 * 0.25 + 4 * 0.5)
    # Task t1 (index 0) twice, t2 left out.
    W2 = aggregate(c, tasks_subset=[0, 0])
    assert W2[0, 1] == pytest.approx(2 * 2.5) and W2[1, 0] == pytest.approx(2 * 0.5)


def test_equal_task_weight_ignores_comparison_counts() -> None:
    """With task_weight='equal', repeating a task's comparisons 10x changes nothing."""
    base = soft_data(7, n=5, m=500)
    t0 = base.task == 0
    rep = np.concatenate([np.arange(len(base))] + [np.flatnonzero(t0)] * 9)
    names = np.array(base.players)
    tasks = np.array(base.tasks)
    dup = Comparisons.from_arrays(
        tasks[base.task[rep]],
        names[base.i[rep]],
        names[base.j[rep]],
        base.outcome[rep],
        base.weight[rep],
        players=base.players,
    )
    eq_base = fit_bt(aggregate(base, task_weight="equal")).theta
    eq_dup = fit_bt(aggregate(dup, task_weight="equal")).theta
    assert np.max(np.abs(eq_base - eq_dup)) * ELO_SCALE < ELO_TOL
    plain_dup = fit_bt(aggregate(dup)).theta
    assert np.max(np.abs(plain_dup - fit_bt(aggregate(base)).theta)) * ELO_SCALE > 1.0
    Weq = aggregate(base, task_weight="equal")
    assert Weq.sum() == pytest.approx(base.n_tasks)


def test_to_elo_anchor_and_scale() -> None:
    theta = np.array([0.3, -0.2, 1.1])
    elo = to_elo(theta, 1)
    assert elo[1] == 1000.0
    p = 1 / (1 + 10 ** ((elo[0] - elo[2]) / 400))
    assert p == pytest.approx(expit(theta[2] - theta[0]))


def _comps(rows: list[tuple[str, str, str]]) -> Comparisons:
    t, win, lose = zip(*rows, strict=True)
    return Comparisons.from_arrays(list(t), list(win), list(lose))


def test_never_loses_is_warned_and_finite() -> None:
    c = _comps(
        [("1", "a", "b"), ("2", "b", "a"), ("3", "c", "a"), ("4", "c", "b"), ("5", "b", "a")]
    )
    fit = fit_bt(aggregate(c), players=c.players)
    assert not fit.mle_exists and fit.prior == FALLBACK_PRIOR
    assert any("never lose: c" in w for w in fit.warnings)
    assert any("do not exist" in w for w in fit.warnings)
    assert np.all(np.isfinite(fit.theta)) and fit.converged
    assert fit.theta[2] == max(fit.theta)


def test_never_wins_and_disconnected_are_warned() -> None:
    c = _comps(
        [
            ("1", "a", "b"),
            ("2", "b", "a"),
            ("3", "x", "y"),
            ("4", "y", "x"),
            ("5", "a", "z"),
            ("6", "b", "z"),
        ]
    )
    problems = diagnose(aggregate(c), c.players)
    text = " | ".join(problems)
    assert "disconnected (2 groups" in text
    assert "never win: z" in text
    fit = fit_bt(aggregate(c), players=c.players)
    assert fit.prior == FALLBACK_PRIOR and np.all(np.isfinite(fit.theta))


def test_group_that_never_loses_to_the_rest() -> None:
    # a and b trade wins, c and d trade wins, but {a, b} always beat {c, d}.
    c = _comps(
        [
            ("1", "a", "b"),
            ("2", "b", "a"),
            ("3", "c", "d"),
            ("4", "d", "c"),
            ("5", "a", "c"),
            ("6", "b", "d"),
        ]
    )
    problems = diagnose(aggregate(c), c.players)
    assert len(problems) == 1 and "not strongly connected" in problems[0]


def test_explicit_prior_skips_the_fallback() -> None:
    c = _comps([("1", "a", "b"), ("2", "a", "b")])
    fit = fit_bt(aggregate(c), prior=0.5)
    assert fit.warnings == [] and fit.prior == 0.5
    # Closed form for two players with the Gaussian prior: θa = -θb, 2 σ(-2θa) = θa·0.5.
    ta = fit.theta[0]
    assert 2 * expit(-2 * ta) == pytest.approx(0.5 * ta, abs=1e-9)


def test_batch_fit_matches_single_fits() -> None:
    Ws = np.stack([aggregate(soft_data(s, n=6, m=800)) for s in range(4)])
    theta, ok = fit_bt_batch(Ws, prior=0.0, theta0=np.zeros(6))
    assert ok.all()
    for k in range(4):
        single = fit_bt(Ws[k]).theta
        assert np.max(np.abs(theta[k] - single)) * ELO_SCALE < 1e-4


def test_batch_fit_with_a_shared_factor_matches_single_fits() -> None:
    """Chord steps with the full data's Hessian factor (the bootstrap's fast path) land on
    the same MLE as separate fits, including rounds far enough away to need Newton."""
    base = aggregate(soft_data(8, n=7, m=3000))
    rng = np.random.default_rng(0)
    Ws = np.stack([base * rng.uniform(0.5, 1.5, base.shape) for _ in range(6)])
    Ws[0] = base
    Ws[1] = base * 0.02 + np.eye(7)[::-1] * 5  # far from base: chord steps are too slow
    np.einsum("kii->ki", Ws)[:] = 0.0
    theta0 = fit_bt(base).theta
    factor = hessian_factor(base, theta0, 0.0)
    theta, ok = fit_bt_batch(Ws, prior=0.0, theta0=theta0, factor=factor)
    assert ok.all()
    for k in range(Ws.shape[0]):
        assert np.max(np.abs(theta[k] - fit_bt(Ws[k]).theta)) * ELO_SCALE < 1e-4


def test_newton_is_fast_on_many_players() -> None:
    """300 players / 60,000 comparisons: converges in few Newton steps (a regression guard)."""
    comps = soft_data(11, n=300, m=60_000)
    fit = fit_bt(aggregate(comps))
    assert fit.converged and fit.iterations <= 15


def test_too_many_players_is_a_user_error() -> None:
    from eloledger.errors import UserError
    from eloledger.rating.bt import MAX_PLAYERS

    k = MAX_PLAYERS + 1
    comps = Comparisons.from_arrays(
        np.zeros(k, int), [f"a{x}" for x in range(k)], [f"a{x + 1}" for x in range(k)]
    )
    with pytest.raises(UserError, match="players; the dense Bradley–Terry fit handles up to"):
        aggregate(comps)


@pytest.mark.parametrize("seed", range(6))
def test_diagnose_agrees_with_strong_components(seed: int) -> None:
    """diagnose's quick breadth-first check says "the MLE exists" exactly when scipy finds one
    strongly connected component, on sparse random win graphs near that threshold."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(seed)
    for n in (2, 5, 30):
        for density in (0.02, 0.08, 0.2, 0.5):
            W = (rng.random((n, n)) < density) * rng.integers(1, 4, (n, n)).astype(float)
            np.fill_diagonal(W, 0.0)
            strong = connected_components(csr_matrix(W > 0), directed=True, connection="strong")
            assert (diagnose(W) == []) == (strong[0] == 1), (n, density)
