"""Coverage study of the agent checkpoint verdict (budget/checkpoint_curves.py, budget/sampling_line.py).

    .venv/bin/python bench/study_checkpoint_verdict.py [--reps N]

1. False verdicts under the null: one agent arm that *is* an exact repeated sampler (its work
   after n tries is the best of n independent draws; budget/checkpoint_sim.py), pass/fail,
   6-level and continuous scores, 6-60 tasks x 2-12 sessions. Any "above" or "below" is
   false. Goal: at most 10% (the test is a 95% one: about 5%). With 2 sessions per task no
   budget worth k >= 2 sessions can be tested: every run must say "too few sessions".
2. Power: a plateau agent (no better after two tries) and a beater (n² draws after n tries).
3. Slope intervals: coverage of the slope per decade between budgets. Continuous scores: the
   truth is exact (best of m beats best of m' with probability m / (m + m'), so the Elo of
   k tries is 400·log10 k); pass/fail: the truth is the same fit on 1,500 tasks.
Prints one markdown table row per design: rate, its Monte-Carlo standard error, the goal.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter

import numpy as np

from eloledger.budget.checkpoint_curves import checkpoint_curves
from eloledger.budget.checkpoint_sim import agent_rows

NULL_DESIGNS = [(6, 3), (6, 12), (20, 2), (20, 4), (20, 12), (60, 4), (60, 12)]


def _arm(seed: int, **design):
    return checkpoint_curves(agent_rows(seed, **design), seed=seed, prices={}).arms[0]


def _row(study: str, design: str, reps: int, hits: float, total: int, goal: str) -> None:
    rate = hits / total
    mc = math.sqrt(max(rate * (1 - rate), 1e-12) / total)
    print(f"| {study} | {design} | {reps} | {rate:.3f} ± {mc:.3f} | {goal} |")


def null(reps: int) -> None:
    for kind in ("passfail", "levels", "continuous"):
        for tasks, sessions in NULL_DESIGNS:
            got: Counter = Counter()
            for rep in range(reps):
                got[_arm(rep, tasks=tasks, sessions=sessions, kind=kind).verdict] += 1
            design = f"{kind}, {tasks} tasks x {sessions} sessions"
            if sessions < 3:
                _row("no verdict (too few sessions)", design, reps, got[None], reps, "1.000")
                continue
            false = got["above"] + got["below"]
            _row("false verdict, exact sampler", design, reps, false, reps, "<= 0.10")


def power(reps: int) -> None:
    for shape, want in (("plateau", "below"), ("beater", "above")):
        for kind in ("passfail", "continuous"):
            for tasks, sessions in ((20, 4), (60, 12)):
                got = sum(
                    _arm(rep, tasks=tasks, sessions=sessions, kind=kind, shape=shape).verdict
                    == want
                    for rep in range(reps)
                )
                design = f"{shape}, {kind}, {tasks} x {sessions}"
                _row(f"power: reads '{want}'", design, reps, got, reps, "(reported)")


def slopes(reps: int) -> None:
    for kind in ("continuous", "passfail"):
        truth = None
        if kind == "passfail":
            truth = _arm(999, tasks=1500, sessions=4, kind=kind).slope
        for tasks, sessions in ((8, 4), (20, 4), (10, 12)):
            hits: list[bool] = []
            for rep in range(reps):
                arm = _arm(rep, tasks=tasks, sessions=sessions, kind=kind)
                if truth is None or len(truth) != len(arm.slope):
                    k = np.floor(arm.budgets / 1000.0 + 1e-9)
                    want = np.diff(400.0 * np.log10(k)) / np.diff(np.log10(arm.budgets))
                else:
                    want = truth
                moving = want != 0  # flat stretches (no new checkpoint) are covered trivially
                hits += list(((arm.slope_low <= want) & (want <= arm.slope_high))[moving])
            design = f"{kind}, {tasks} tasks x {sessions} sessions"
            _row("slope interval covers", design, reps, sum(hits), len(hits), "0.95")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--only", choices=("null", "power", "slopes"))
    args = parser.parse_args()
    print("| study | design | reps | rate ± MC s.e. | goal |")
    print("|---|---|---|---|---|")
    for name, study in (("null", null), ("power", power), ("slopes", slopes)):
        if args.only in (None, name):
            study(args.reps)


if __name__ == "__main__":
    main()
