"""Known-truth study of the fairness verdict: the guide's two comparisons and leakage found
with the matched-budget comparison, on the designs users run (one session per task, token
counts that vary +-20% per sample).

    .venv/bin/python bench/study_fairness_verdicts.py [--reps N] [--bootstrap B]

For each design: the runs, the rate of the verdict the goal bounds with its Monte Carlo
standard error, the goal, and beside it the rate the previous rule gave where the record lets
it be recomputed (old real_improvement = pass@1 95% CI above 0 with tokens per success within
10%, whatever N says). About 3 minutes on two cores at the default 100 runs and 300 rounds
(the 400 x 4 design takes half of it).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.fairness_sim import four_arm_design, guide_leakage_example

ARMS = ("old_1", "new_1", "old_n", "new_n")
GAIN_THEN_LOSS = {"p_old": 0.5, "p_new": 0.63, "n_old": 4, "n_new": 4, "agree_new": 0.9}
LEAK = {"n_old": 4, "n_new": 8, "jitter": 0.2}  # same method, 2x the samples, noisy tokens


def _old_real(record: dict[str, Any]) -> bool:
    m = record["metrics"]
    tps = m["tokens_per_success_ratio"]["estimate"]
    return (m["pass1_delta"]["ci_low"] or 0) > 0 and tps is not None and tps <= 1.10


# name, design, (what is counted, predicate), goal text, old-rule predicate or None
Study = tuple[str, dict[str, Any], str, Callable[[dict], bool], str, Callable[[dict], bool] | None]
STUDIES: list[Study] = [
    *[
        (f"+10 pp n=1, -19 pp N, {t} tasks x 1", {**GAIN_THEN_LOSS, "tasks": t},
         "real_evolution", lambda r: r["verdict"] == "real_evolution", "<= 5%", _old_real)
        for t in (50, 100, 400)
    ],
    *[
        (f"leak 2x, +-20% tokens, {t} tasks x 1", {**LEAK, "tasks": t},
         "budget_leakage", lambda r: r["verdict"] == "budget_leakage", "high; says when not", None)
        for t in (100, 200, 400)
    ],
    ("leak 2x, +-20% tokens, 400 tasks x 4", {**LEAK, "tasks": 400, "repeats": 4},
     "budget_leakage", lambda r: r["verdict"] == "budget_leakage", "high", None),
    *[
        (f"real +{g} pp/sample, 2x samples, 100 x 1", {"p_new": 0.5 + g / 100, "n_old": 4,
         "n_new": 8, "tasks": 100}, "budget_leakage",
         lambda r: r["verdict"] == "budget_leakage", "<= 5%", None)
        for g in (5, 10)
    ],
    ("no difference, 100 tasks x 1", {"tasks": 100}, "real_evolution",
     lambda r: r["verdict"] == "real_evolution", "<= 5%", _old_real),
    ("real +18 pp/sample, 200 tasks x 1", {"p_new": 0.68, "tasks": 200}, "real_evolution",
     lambda r: r["verdict"] == "real_evolution", "power", _old_real),
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--bootstrap", type=int, default=300)
    args = parser.parse_args()
    head = f"{'design':<40} {'runs':>4}  {'counted':<15} {'rate':>14}  {'goal':<20} old rule"
    print(head)
    print("-" * len(head))
    for name, design, counted, hit, goal, old in STUDIES:
        start, hits, old_hits = time.perf_counter(), 0, 0
        for rep in range(args.reps):
            rows = four_arm_design(seed=20_000 + rep, **design)
            record = fairness_verdict(rows, *ARMS, bootstrap=args.bootstrap, seed=rep)
            hits += hit(record)
            old_hits += bool(old and old(record))
        rate = hits / args.reps
        mc = math.sqrt(rate * (1 - rate) / args.reps)
        was = f"{old_hits / args.reps:.0%}" if old else "-"
        print(f"{name:<40} {args.reps:>4}  {counted:<15} {rate:>6.1%} ± {mc:>5.1%}  {goal:<20} "
              f"{was}  ({time.perf_counter() - start:.0f} s)")  # fmt: skip
    record = fairness_verdict(guide_leakage_example(), *ARMS, bootstrap=2000)
    print(f"\nthe guide's leakage example (200 tasks x 1): {record['verdict']}")


if __name__ == "__main__":
    main()
