"""Coverage studies of the Elo table's and the budget curves' intervals (seeded, numpy).

    .venv/bin/python bench/study_intervals.py [--reps N] [--only NAME]

* never-lose: a player who never loses (true +700 over the anchor), every pair compared 9
  times a task on one outcome (3 samples per arm); how often its lower bound lies above the
  truth (goal <= 0.025: a one-sided 97.5% bound).
* cot: ΔElo per 1K tokens and the marginal step for arms within 1-1.5x of each other's tokens
  (rating/budget_sim.py cot_arms); coverage of the true ratio (population Elo gap over the
  population token gap).
* curves: budget-curve interval of an equal arm at the anchor's first budget (truth 1000),
  arm x task effects, at 10 and 30 tasks.
* elo-bootstrap: `elo --intervals bootstrap` coverage at 5 tasks (round robin, 4 players).
* multiplicity: 8 and 16 arms equal to the anchor; the share of runs in which some arm's
  interval excludes the anchor, one at a time and with --simultaneous (goal <= 0.05).
Prints one markdown row per design: rate ± its Monte-Carlo standard error, and the goal.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from eloledger.rating.budget_sim import (
    COT_ELO,
    cot_arms,
    cot_true_tokens,
    round_robin,
    sampling_sessions,
)
from eloledger.rating.comparisons import Comparisons
from eloledger.rating.curves import budget_curves
from eloledger.rating.table import elo_report


def _row(study: str, design: str, reps: int, hits: list[bool], goal: str) -> None:
    rate = float(np.mean(hits)) if hits else math.nan
    mc = math.sqrt(max(rate * (1 - rate), 1e-12) / max(len(hits), 1))
    print(f"| {study} | {design} | {reps} ({len(hits)} values) | {rate:.3f} ± {mc:.3f} | {goal} |")


def _comps(rows: list[tuple]) -> Comparisons:
    t, a, b, o = zip(*rows, strict=True)
    return Comparisons.from_arrays(list(t), list(a), list(b), list(o))


def never_lose(reps: int) -> None:
    truth = {"p0": 0, "p1": 100, "p2": 200, "top": 700}
    for tasks in (5, 10):
        above = []
        for rep in range(reps):
            rows = round_robin(truth, tasks, np.random.default_rng(rep))
            comps = _comps([r for r in rows for _ in range(9)])
            top = comps.player_index("top")
            if comps.wins()[top] < comps.games()[top]:
                continue
            report = elo_report(comps, anchor="p0", intervals="none")
            p = next(p for p in report.players if p["name"] == "top")
            above.append(p["ci_low"] > 1000 + truth["top"])
        _row("never-lose bound above the truth", f"{tasks} tasks, 3x3 samples", reps, above,
             "<= 0.025")  # fmt: skip


def cot(reps: int) -> None:
    for tasks in (30, 100):
        delta, marginal = [], []
        for rep in range(reps):
            rows, costs = cot_arms(tasks, rep)
            report = elo_report(_comps(rows), costs=costs, anchor="base", intervals="sandwich",
                                seed=rep)  # fmt: skip
            players = {p["name"]: p for p in report.players}
            for arm in ("cot", "cot_long"):
                gap = cot_true_tokens(arm) - cot_true_tokens("base")
                truth = COT_ELO[arm] / (gap / 1000.0)
                p = players[arm]
                delta.append(p["delta_elo_per_1k_low"] <= truth <= p["delta_elo_per_1k_high"])
            p = players["cot_long"]
            if "marginal_elo_per_1k_low" in p:
                prev = "cot" if players["cot"]["dominated"] is False else "base"
                gap = cot_true_tokens("cot_long") - cot_true_tokens(prev)
                truth = (COT_ELO["cot_long"] - COT_ELO[prev]) / (gap / 1000.0)
                marginal.append(p["marginal_elo_per_1k_low"] <= truth
                                <= p["marginal_elo_per_1k_high"])  # fmt: skip
        _row("ΔElo/1K interval covers", f"CoT, {tasks} tasks", reps, delta, "0.95")
        _row("marginal Elo/1K interval covers", f"CoT, {tasks} tasks", reps, marginal, "0.95")


def curves(reps: int) -> None:
    for tasks in (10, 30):
        hits = []
        for rep in range(reps):
            rows = sampling_sessions(arms=("a", "b"), tasks=tasks, sessions=4, samples=4,
                                     arm_task_sd=1.0, seed=rep)  # fmt: skip
            result = budget_curves(rows, bootstrap=200, seed=rep, resample="tasks")
            anchor = result.anchor.split("@")[0]
            other = result.arm("b" if anchor == "a" else "a")
            at = np.flatnonzero(other.tokens == result.arm(anchor).tokens[0])
            if len(at):
                hits.append(other.ci_low[at[0]] <= 1000 <= other.ci_high[at[0]])
        _row("curve bootstrap interval covers", f"{tasks} tasks x 4 sessions", reps, hits, "0.95")


def elo_bootstrap(reps: int) -> None:
    four = {"a": 0.0, "b": 60.0, "c": 120.0, "d": 200.0}
    eight = {f"p{k}": 50.0 * k for k in range(8)}
    for truth in (four, eight):
        anchor = next(iter(truth))
        hits = []
        for rep in range(reps):
            comps = _comps(round_robin(truth, 5, np.random.default_rng(rep)))
            players = elo_report(comps, anchor=anchor, intervals="bootstrap",
                                 bootstrap_rounds=300, seed=rep).players  # fmt: skip
            rows = {p["name"]: p for p in players}
            hits += [rows[k]["ci_low"] <= 1000 + truth[k] <= rows[k]["ci_high"]
                     for k in truth if k != anchor]  # fmt: skip
        design = f"5 tasks, round robin, {len(truth)} players"
        _row("elo --intervals bootstrap covers", design, reps, hits, "0.95")


def multiplicity(reps: int) -> None:
    for arms in (8, 16):
        equal = {f"arm{k}": 0.0 for k in range(arms + 1)}
        for simultaneous in (False, True):
            apart = []
            for rep in range(reps):
                comps = _comps(round_robin(equal, 30, np.random.default_rng(rep)))
                report = elo_report(comps, anchor="arm0", intervals="sandwich",
                                    simultaneous=simultaneous)  # fmt: skip
                apart.append(any(not p["ci_low"] <= 1000 <= p["ci_high"] for p in report.players))
            how = "--simultaneous" if simultaneous else "one at a time"
            _row("some equal arm 'apart' from the anchor", f"{arms} arms, 30 tasks, {how}", reps,
                 apart, "<= 0.05" if simultaneous else "(reported)")  # fmt: skip


STUDIES = {"never-lose": never_lose, "cot": cot, "curves": curves,
           "elo-bootstrap": elo_bootstrap, "multiplicity": multiplicity}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--only", choices=tuple(STUDIES))
    args = parser.parse_args()
    print("| study | design | reps | rate ± MC s.e. | goal |")
    print("|---|---|---|---|---|")
    for name, study in STUDIES.items():
        if args.only in (None, name):
            study(args.reps)


if __name__ == "__main__":
    main()
