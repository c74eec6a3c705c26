"""Heavier known-truth studies behind tests/test_rating_truth_*.py, with more runs.

    .venv/bin/python bench/study_rating_truth.py [--reps N]

Prints, per study, the rate the tests bound: fairness verdicts under real gains, pure leakage
and no difference; curve-interval coverage by resampling mode at 30 tasks; task-bootstrap
coverage at 10 and 30 tasks. Not a timed test; minutes on two cores at the default 300 runs.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from eloledger.budget.curves import budget_curves
from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.sampling_sim import four_arms, round_robin, sampling_sessions
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report

ARMS = ("old_1", "new_1", "old_n", "new_n")


def fairness(reps: int) -> None:
    designs = {
        "+5 pp, 100 tasks x 1": dict(p_new=0.55, n_new=8, tasks=100, repeats=1),
        "+10 pp, 100 tasks x 1": dict(p_new=0.60, n_new=8, tasks=100, repeats=1),
        "leak 2x, 100 tasks x 1": dict(p_new=0.5, n_new=8, tasks=100, repeats=1),
        "leak 2x, 400 tasks x 4": dict(p_new=0.5, n_new=8, tasks=400, repeats=4),
        "null, 30 tasks x 1": dict(p_new=0.5, n_new=4, tasks=30, repeats=1),
    }
    for name, design in designs.items():
        got: Counter = Counter()
        for rep in range(reps):
            rows = four_arms(p_old=0.5, n_old=4, seed=10_000 + rep, **design)
            got[fairness_verdict(rows, *ARMS, bootstrap=400, seed=rep)["verdict"]] += 1
        shares = ", ".join(f"{k} {v / reps:.1%}" for k, v in sorted(got.items()))
        print(f"fairness  {name:<24} {shares}")


def curves(reps: int) -> None:
    for mode in ("tasks", "both", "sessions"):
        hits = []
        for rep in range(reps):
            rows = sampling_sessions(
                arms=("a", "b"), tasks=30, sessions=4, samples=4, arm_task_sd=1.0, seed=rep
            )
            result = budget_curves(rows, bootstrap=100, seed=rep, resample=mode)
            anchor = result.anchor.split("@")[0]
            other = result.arm("b" if anchor == "a" else "a")
            at = np.flatnonzero(other.tokens == result.arm(anchor).tokens[0])
            if len(at):
                hits.append(other.ci_low[at[0]] <= 1000 <= other.ci_high[at[0]])
        print(f"curves    resample={mode:<9} coverage {np.mean(hits):.3f} ({len(hits)} runs)")


def bootstrap(reps: int) -> None:
    truth = {"a": 0, "b": 60, "c": 120, "d": 200}
    for tasks in (10, 30):
        hits = []
        for rep in range(reps):
            t, a, b, o = zip(*round_robin(truth, tasks, np.random.default_rng(rep)), strict=True)
            comps = Comparisons.from_arrays(list(t), list(a), list(b), list(o))
            players = elo_report(
                comps, anchor="a", intervals="bootstrap", bootstrap_rounds=300, seed=rep
            ).players
            rows = {p["name"]: p for p in players}
            hits += [rows[k]["ci_low"] <= 1000 + truth[k] <= rows[k]["ci_high"] for k in "bcd"]
        print(f"bootstrap {tasks:>3} tasks      coverage {np.mean(hits):.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    n = parser.parse_args().reps
    fairness(n)
    curves(n)
    bootstrap(n)
