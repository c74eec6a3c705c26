"""The default intervals (task-clustered sandwich): coverage in simulation, agreement with the
exact task bootstrap under strong within-task correlation, the prior, the grouped meat, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eloledger.cli import main
from eloledger.rating import sandwich
from eloledger.rating.bootstrap import bootstrap
from eloledger.rating.bt import ELO_SCALE, aggregate, fit_bt
from eloledger.rating.comparisons import Comparisons
from eloledger.rating.sandwich import bt_sandwich

THETA = np.array([0.0, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.2])
TASK_SD = 0.8  # sd of the per-(task, player) effect: strong within-task correlation
REPEATS = 3  # judgments of each pair within a task, sharing the task's effects


def simulate(rng: np.random.Generator, tasks: int, theta: np.ndarray = THETA) -> Comparisons:
    """Every task compares every pair ``REPEATS`` times; each player has a task effect."""
    n = theta.size
    a, b = np.triu_indices(n, 1)
    a = np.tile(np.repeat(a, REPEATS), tasks)
    b = np.tile(np.repeat(b, REPEATS), tasks)
    per_task = a.size // tasks
    task = np.repeat(np.arange(tasks), per_task)
    effect = rng.normal(0.0, TASK_SD, (tasks, n))
    d = theta[a] + effect[task, a] - theta[b] - effect[task, b]
    outcome = (rng.random(a.size) < 1.0 / (1.0 + np.exp(-d))).astype(float)
    names = np.array([f"p{k}" for k in range(n)])
    return Comparisons.from_arrays(task, names[a], names[b], outcome, players=list(names))


def population_theta(theta: np.ndarray) -> np.ndarray:
    """The Bradley–Terry limit of infinitely many such tasks: the marginal win probability
    E σ(θa − θb + ε), ε ~ N(0, 2·TASK_SD²), by Gauss–Hermite quadrature, then the exact fit."""
    z, wq = np.polynomial.hermite_e.hermegauss(60)
    wq = wq / wq.sum()
    d = theta[:, None] - theta[None, :]
    p = (1.0 / (1.0 + np.exp(-(d[..., None] + np.sqrt(2.0) * TASK_SD * z)))) @ wq
    W = p * 1000.0
    np.fill_diagonal(W, 0.0)
    fit = fit_bt(W)
    return fit.theta - fit.theta[0]


def coverage(tasks: int, reps: int, seed: int) -> tuple[float, float]:
    """Share of the sandwich's 95% intervals (and of the same formula clustered by single
    comparison, i.e. ignoring the within-task correlation) that hold the true (population)
    Elo differences, over ``reps`` simulated evaluations of ``tasks`` tasks."""
    rng = np.random.default_rng(seed)
    truth = ELO_SCALE * population_theta(THETA) + 1000.0
    hits_task = hits_row = trials = 0
    for _ in range(reps):
        comps = simulate(rng, tasks=tasks)
        fit = fit_bt(aggregate(comps))
        clustered = bt_sandwich(comps, fit.theta, prior=fit.prior, anchor=0)
        single = Comparisons(
            players=comps.players,
            tasks=[str(k) for k in range(len(comps))],
            task=np.arange(len(comps)),
            i=comps.i,
            j=comps.j,
            outcome=comps.outcome,
            weight=comps.weight,
        )
        naive = bt_sandwich(single, fit.theta, prior=fit.prior, anchor=0)
        hits_task += covered(clustered, truth)
        hits_row += covered(naive, truth)
        trials += THETA.size - 1
    return hits_task / trials, hits_row / trials


def covered(res, truth: np.ndarray) -> int:
    """How many intervals (the anchor's excluded: it is exact) hold the truth."""
    return int(((res.ci_low <= truth) & (truth <= res.ci_high))[1:].sum())


def test_coverage_near_nominal_and_naive_undercovers() -> None:
    """300 simulated evaluations of 120 tasks: the sandwich's 95% intervals cover the truth
    about 95% of the time; clustered by single comparison they cover far less."""
    by_task, by_row = coverage(tasks=120, reps=300, seed=20261201)
    print(f"coverage, 120 tasks: sandwich by task {by_task:.3f}, by comparison {by_row:.3f}")
    assert 0.925 <= by_task <= 0.975, by_task
    assert by_row < 0.85, by_row


def test_coverage_with_few_tasks() -> None:
    """15 tasks: the t quantile (14 degrees of freedom) keeps the coverage near nominal."""
    by_task, _ = coverage(tasks=15, reps=300, seed=15)
    print(f"coverage, 15 tasks: sandwich by task {by_task:.3f}")
    assert 0.925 <= by_task <= 0.975, by_task


def test_half_widths_match_a_1000_round_task_bootstrap() -> None:
    """Strong within-task correlation: every half-width within 20% of the exact bootstrap's
    (and on average within 7%), rank intervals nearly the same."""
    rng = np.random.default_rng(5)
    theta = rng.normal(0.0, 0.6, 20)
    comps = simulate(rng, tasks=300, theta=theta)
    fit = fit_bt(aggregate(comps))
    sand = bt_sandwich(comps, fit.theta, prior=0.0, anchor=0)
    boot = bootstrap(comps, rounds=1000, seed=3, theta0=fit.theta)
    ratio = (sand.ci_high - sand.ci_low)[1:] / (boot.ci_high - boot.ci_low)[1:]
    print(f"half-width ratio sandwich/bootstrap: min {ratio.min():.3f} max {ratio.max():.3f}")
    assert np.all((ratio > 0.8) & (ratio < 1.2)), ratio
    assert abs(ratio.mean() - 1.0) < 0.07, ratio.mean()
    assert np.all(np.abs(sand.rank_low - boot.rank_low) <= 1)
    assert np.all(np.abs(sand.rank_high - boot.rank_high) <= 1)
    assert sand.ci_low[0] == sand.ci_high[0] == 1000.0  # the anchor is exact by definition


def test_with_a_prior_matches_the_bootstrap_with_that_prior() -> None:
    """A player who never loses: the fit falls back to a prior; the sandwich uses the
    penalised Hessian as its bread and still agrees with the bootstrap's widths."""
    rng = np.random.default_rng(11)
    comps = simulate(rng, tasks=200, theta=np.array([0.0, 0.3, 0.6, 0.9, 1.2]))
    comps = Comparisons.from_arrays(
        np.concatenate([comps.task, np.arange(200)]),
        [comps.players[k] for k in comps.i] + ["champ"] * 200,
        [comps.players[k] for k in comps.j] + [comps.players[k % 5] for k in range(200)],
        np.concatenate([comps.outcome, np.ones(200)]),
    )
    fit = fit_bt(aggregate(comps), players=comps.players)
    assert fit.prior > 0 and not fit.mle_exists
    sand = bt_sandwich(comps, fit.theta, prior=fit.prior, anchor=0)
    boot = bootstrap(comps, rounds=1000, seed=1, prior=fit.prior, theta0=fit.theta)
    ratio = (sand.ci_high - sand.ci_low)[1:] / (boot.ci_high - boot.ci_low)[1:]
    assert np.all(np.isfinite(sand.ci_low)) and np.all((ratio[:-1] > 0.8) & (ratio[:-1] < 1.2))
    # The champion's rating is set by the prior alone: the linearisation is wider (cautious).
    assert comps.players[-1] == "champ" and ratio[-1] >= 0.9, ratio


def test_grouped_meat_agrees_with_the_exact_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MIN_GROUPS tasks the meat sums tasks into groups; the standard errors stay within a
    few percent of the ungrouped computation."""
    rng = np.random.default_rng(2)
    comps = simulate(rng, tasks=3000, theta=np.linspace(0.0, 1.0, 6))
    fit = fit_bt(aggregate(comps))
    monkeypatch.setattr(sandwich, "MIN_GROUPS", 500)
    grouped = bt_sandwich(comps, fit.theta, prior=0.0, anchor=0).se_elo
    monkeypatch.setattr(sandwich, "MIN_GROUPS", 10**9)
    exact = bt_sandwich(comps, fit.theta, prior=0.0, anchor=0).se_elo
    assert np.all(np.abs(grouped[1:] / exact[1:] - 1.0) < 0.1)
    assert not np.allclose(grouped, exact)  # the grouping really happened


def test_meat_blocks_give_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many dense blocks (rows sorted by task) or one: the same meat."""
    rng = np.random.default_rng(4)
    comps = simulate(rng, tasks=50, theta=np.linspace(0.0, 1.0, 5))
    r = rng.normal(size=len(comps))
    one, clusters = sandwich.task_meat(comps.task, comps.i, comps.j, r, comps.n_tasks, 6, extra=r)
    assert clusters == 50
    monkeypatch.setattr(sandwich, "_BLOCK_CELLS", 13)
    many, _ = sandwich.task_meat(comps.task, comps.i, comps.j, r, comps.n_tasks, 6, extra=r)
    np.testing.assert_allclose(many, one, rtol=1e-12, atol=1e-12)
    G = np.zeros((comps.n_tasks, 6))
    np.add.at(G, (comps.task, comps.i), r)
    np.add.at(G, (comps.task, comps.j), -r)
    np.add.at(G, (comps.task, np.full(len(comps), 5)), r * r)
    np.testing.assert_allclose(one, G.T @ G * 50 / 49, rtol=1e-12, atol=1e-12)


def write(path: Path, comps: Comparisons) -> Path:
    lines = ["task_id,a,b,outcome"] + [
        f"t{t},{comps.players[i]},{comps.players[j]},{o:g}"
        for t, i, j, o in zip(comps.task, comps.i, comps.j, comps.outcome, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_default_is_the_sandwich(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    comps = simulate(np.random.default_rng(0), tasks=40, theta=np.linspace(0.0, 1.0, 4))
    path = write(tmp_path / "c.csv", comps)
    assert main(["elo", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["intervals"]["method"] == "sandwich" and report["bootstrap"]["rounds"] == 0
    assert all(p["ci_low"] <= p["elo"] <= p["ci_high"] for p in report["players"])
    assert main(["elo", str(path), "--bootstrap", "300", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["intervals"]["method"] == "bootstrap" and report["bootstrap"]["rounds"] == 300
    assert main(["elo", str(path), "--intervals", "none", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["intervals"]["method"] == "none"
    assert all(p["rank_low"] is None for p in report["players"])
    assert main(["elo", str(path)]) == 0
    assert "clustered by task (sandwich" in capsys.readouterr().out


def test_cli_contradictory_interval_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comps = simulate(np.random.default_rng(0), tasks=10, theta=np.linspace(0.0, 1.0, 3))
    path = write(tmp_path / "c.csv", comps)
    assert main(["elo", str(path), "--intervals", "sandwich", "--bootstrap", "200"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--bootstrap 200 contradicts --intervals sandwich" in err[0]
