"""Benchmark (d): default intervals at arena scale, and how they compare with the bootstrap.

Part 1, side by side on the same CSV (1,000 players / 1M comparisons, bench_bt's data), each
contestant a fresh process (interpreter start and imports included for both):

* eloledger: ``eloledger elo FILE --format json`` — the point fit *and* its default 95%
  intervals (task-clustered sandwich) and rank intervals;
* baseline:  Python's ``csv`` module + ``choix.ilsr_pairwise_dense``, a point fit only
  (bench/baseline_choix.py run as a script: it imports nothing from eloledger).

Goal: ratio eloledger/baseline <= 1.0. Alternating runs, best of ``--repeat`` for each side.

Part 2, on data with strong within-task correlation (bench_bootstrap's generator: 50 arms,
200,000 comparisons, 1,000 tasks, per-(task, arm) effects): half-widths of the sandwich vs a
1000-round task bootstrap (goal: every one within 20%), and the time of each.

    .venv/bin/python bench/bench_intervals.py [--players 1000] [--comparisons 1000000]
                                              [--repeat 2] [--threads=1] [--corr-arms 50]
"""

from __future__ import annotations

import os
import sys

_THREADS = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--threads=")), "1")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import argparse  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from bench_bootstrap import make_data  # noqa: E402
from bench_bt import write_file  # noqa: E402
from eloledger.rating.bootstrap import bootstrap  # noqa: E402
from eloledger.rating.bt import aggregate, fit_bt  # noqa: E402
from eloledger.rating.sandwich import bt_sandwich  # noqa: E402

BASELINE = str(Path(__file__).with_name("baseline_choix.py"))


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def part1(args: argparse.Namespace) -> None:
    cli = str(Path(sys.executable).with_name("eloledger"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "comparisons.csv"
        write_file(path, args.players, args.comparisons, args.seed)
        size = path.stat().st_size / 1e6
        print(f"data: {args.players} players, {args.comparisons:,} comparisons, {size:.1f} MB CSV")
        best = {"e": [float("inf")] * 2, "b": [float("inf")] * 2}
        for _ in range(args.repeat):
            for key, argv in (
                ("e", [cli, "elo", str(path), "--format", "json"]),
                ("b", [sys.executable, BASELINE, str(path)]),
            ):
                wall, cpu = timed(argv)
                best[key] = [min(best[key][0], wall), min(best[key][1], cpu)]
    (t_e, c_e), (t_b, c_b) = best["e"], best["b"]
    print(f"BLAS threads: {_THREADS}; best of {args.repeat} alternating runs, fresh processes")
    print(f"eloledger elo (fit + sandwich + ranks): {t_e:7.3f} s wall {c_e:7.3f} s cpu")
    print(f"csv module + choix dense (point fit):   {t_b:7.3f} s wall {c_b:7.3f} s cpu")
    print(f"ratio eloledger/baseline: {t_e / t_b:.3f} wall, {c_e / c_b:.3f} cpu  (goal <= 1.0)")


def part2(args: argparse.Namespace) -> None:
    comps = make_data(args.corr_arms, args.corr_comparisons, args.corr_tasks, args.seed)
    c0 = time.process_time()
    W = aggregate(comps)
    fit = fit_bt(W)
    c_fit = time.process_time() - c0
    c0 = time.process_time()
    sand = bt_sandwich(comps, fit.theta, prior=0.0, anchor=0, W=W)
    c_sand = time.process_time() - c0
    c0 = time.process_time()
    boot = bootstrap(comps, rounds=1000, seed=1, theta0=fit.theta)
    c_boot = time.process_time() - c0
    ratio = (sand.ci_high - sand.ci_low)[1:] / (boot.ci_high - boot.ci_low)[1:]
    print(
        f"correlated data: {args.corr_arms} arms, {args.corr_comparisons:,} comparisons, "
        f"{args.corr_tasks:,} tasks (per-task arm effects)"
    )
    print(
        f"cpu: point fit {c_fit:.3f} s, sandwich {c_sand:.3f} s, "
        f"1000-round task bootstrap {c_boot:.3f} s"
    )
    print(
        f"half-width sandwich/bootstrap: min {ratio.min():.3f} mean {ratio.mean():.3f} "
        f"max {ratio.max():.3f}  (goal: all within 0.8..1.2)"
    )
    same = np.mean((sand.rank_low == boot.rank_low) & (sand.rank_high == boot.rank_high))
    print(f"rank intervals identical to the bootstrap's for {same:.0%} of arms")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corr-arms", type=int, default=50, help="part 2 size")
    ap.add_argument("--corr-comparisons", type=int, default=200_000, help="part 2 size")
    ap.add_argument("--corr-tasks", type=int, default=1000, help="part 2 size")
    ap.add_argument("--repeat", type=int, default=2, help="alternate runs, keep each side's best")
    ap.add_argument("--threads", default=_THREADS, help="BLAS threads for both (use --threads=N)")
    args = ap.parse_args()
    part1(args)
    part2(args)


if __name__ == "__main__":
    main()
