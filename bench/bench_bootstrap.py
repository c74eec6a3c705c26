"""Benchmark (c): 1,000 task-bootstrap rounds on 50 arms / 200,000 comparisons / 1,000 tasks.

Goal: <= 3 s on a 2-core machine. Side by side on the same data, a naive baseline: every
round resamples the 200,000 comparison rows with replacement, rebuilds the win matrix with
``np.add.at`` and refits from scratch with ``choix.ilsr_pairwise_dense``. The baseline is run
for fewer rounds (``--baseline-rounds``) and its time is extrapolated linearly to the same
number of rounds; the output says so. (It also resamples the wrong unit — single comparisons —
which is why its intervals come out narrower; the widths are printed for contrast.)

    .venv/bin/python bench/bench_bootstrap.py [--rounds 1000] [--baseline-rounds 20] [--threads=1]
"""

from __future__ import annotations

import os
import sys

# BLAS threads: decided before numpy loads, the same for both contestants (see bench_bt.py).
_THREADS = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--threads=")), "1")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import argparse  # noqa: E402
import time  # noqa: E402

import choix  # noqa: E402
import numpy as np  # noqa: E402

from eloledger.rating.bootstrap import bootstrap  # noqa: E402
from eloledger.rating.bt import ELO_SCALE  # noqa: E402
from eloledger.rating.comparisons import Comparisons  # noqa: E402


def make_data(arms: int, comparisons: int, tasks: int, seed: int) -> Comparisons:
    """Arms with true strengths, plus a per-(task, arm) effect so comparisons within a task
    are correlated, as they are in real evaluations."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.8, arms)
    task = rng.integers(0, tasks, comparisons)
    i = rng.integers(0, arms, comparisons)
    j = (i + rng.integers(1, arms, comparisons)) % arms
    effect = rng.normal(0.0, 0.5, (tasks, arms))
    p = 1.0 / (1.0 + np.exp(-(theta[i] + effect[task, i] - theta[j] - effect[task, j])))
    outcome = (rng.random(comparisons) < p).astype(float)
    names = np.array([f"arm-{k:02d}" for k in range(arms)])
    return Comparisons.from_arrays(task, names[i], names[j], outcome, players=list(names))


def naive_round(comps: Comparisons, rng: np.random.Generator) -> np.ndarray:
    m, n = len(comps), comps.n_players
    rows = rng.integers(0, m, m)
    mat = np.zeros((n, n))
    np.add.at(mat, (comps.i[rows], comps.j[rows]), comps.outcome[rows])
    np.add.at(mat, (comps.j[rows], comps.i[rows]), 1.0 - comps.outcome[rows])
    theta = choix.ilsr_pairwise_dense(mat, alpha=0.0)
    return ELO_SCALE * (theta - theta[0]) + 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--arms", type=int, default=50)
    ap.add_argument("--comparisons", type=int, default=200_000)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--baseline-rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", default=_THREADS, help="BLAS threads for both (use --threads=N)")
    args = ap.parse_args()
    comps = make_data(args.arms, args.comparisons, args.tasks, args.seed)
    print(
        f"data: {args.arms} arms, {args.comparisons:,} comparisons, {args.tasks} tasks; "
        f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}"
    )

    w0, c0 = time.perf_counter(), time.process_time()
    res = bootstrap(comps, rounds=args.rounds, seed=1)
    t_e, cpu_e = time.perf_counter() - w0, time.process_time() - c0

    rng = np.random.default_rng(1)
    w0, c0 = time.perf_counter(), time.process_time()
    naive = np.array([naive_round(comps, rng) for _ in range(args.baseline_rounds)])
    t_b, cpu_b = time.perf_counter() - w0, time.process_time() - c0
    scale = args.rounds / args.baseline_rounds
    t_b_x, cpu_b_x = t_b * scale, cpu_b * scale

    width_task = float(np.mean(res.ci_high[1:] - res.ci_low[1:]))
    lo, hi = np.quantile(naive, [0.025, 0.975], axis=0)
    width_rows = float(np.mean(hi[1:] - lo[1:]))
    print(
        f"eloledger bootstrap by task, {args.rounds} rounds: {t_e:7.3f} s wall {cpu_e:7.3f} s cpu (goal <= 3 s)"
    )
    print(
        f"naive baseline, {args.baseline_rounds} rounds measured ({t_b:.3f} s wall, {cpu_b:.3f} s cpu), "
        f"extrapolated x{scale:g} to {args.rounds} rounds: {t_b_x:7.2f} s wall {cpu_b_x:7.2f} s cpu"
    )
    print(f"ratio eloledger/baseline: {t_e / t_b_x:.4f} wall, {cpu_e / cpu_b_x:.4f} cpu")
    print(
        f"mean 95% interval width: {width_task:.1f} Elo resampling tasks vs {width_rows:.1f} Elo "
        f"resampling single comparisons ({args.baseline_rounds} rounds only; too narrow: "
        "within-task correlation ignored)"
    )
    if res.warnings:
        print("warnings:", *res.warnings, sep="\n  ")


if __name__ == "__main__":
    main()
