"""Benchmark (a): Bradley–Terry end to end from a CSV file, eloledger vs csv module + choix.

Writes N comparisons among P players (true θ ~ N(0, 1), outcomes 1 / 0 / 0.5 ties) to a CSV
file in a temp dir, then times, side by side on that same file:

* eloledger: ``read_comparisons`` + ``aggregate`` + ``fit_bt`` (exact MLE by Newton);
* baseline:  Python's ``csv`` module, names mapped with a dict, the win matrix built with
  ``np.add.at``, then ``choix.ilsr_pairwise_dense`` (bench/baseline_choix.py).

Prints both times, the ratio (goal <= 0.5) and max |ΔElo| between the two estimates.

    .venv/bin/python bench/bench_bt.py [--players 1000] [--comparisons 1000000] [--repeat 2]
                                       [--threads=1]
"""

from __future__ import annotations

import os
import sys

# BLAS threads: decided before numpy loads, the same for both contestants. On a small shared
# machine one thread per process is both faster and far less noisy (--threads to change).
_THREADS = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--threads=")), "1")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from baseline_choix import baseline_fit  # noqa: E402
from eloledger.rating.bt import aggregate, fit_bt, to_elo  # noqa: E402
from eloledger.rating.comparisons import read_comparisons  # noqa: E402


def write_file(path: Path, players: int, comparisons: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, players)
    i = rng.integers(0, players, comparisons)
    j = (i + rng.integers(1, players, comparisons)) % players
    p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
    u = rng.random(comparisons)
    outcome = np.where(u < 0.1, 0.5, (rng.random(comparisons) < p).astype(float))
    task = rng.integers(0, comparisons // 50 + 1, comparisons)
    names = np.array([f"model-{k:04d}" for k in range(players)])
    out_s = np.where(outcome == 0.5, "0.5", np.where(outcome == 1.0, "1", "0"))
    lines = np.char.add(
        np.char.add(np.char.add(np.char.add(task.astype(str), ","), names[i]), ","),
        np.char.add(np.char.add(names[j], ","), out_s),
    )
    path.write_text("task_id,a,b,outcome\n" + "\n".join(lines.tolist()) + "\n")


def eloledger_fit(path: Path) -> tuple[list[str], np.ndarray]:
    comps = read_comparisons(path)
    fit = fit_bt(aggregate(comps))
    if not fit.converged or fit.warnings:
        raise SystemExit(f"eloledger fit failed: {fit.warnings}")
    return comps.players, fit.theta


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--comparisons", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2, help="alternate runs, keep each side's best")
    ap.add_argument("--threads", default=_THREADS, help="BLAS threads for both (use --threads=N)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "comparisons.csv"
        write_file(path, args.players, args.comparisons, args.seed)
        size = path.stat().st_size / 1e6
        print(f"data: {args.players} players, {args.comparisons:,} comparisons, {size:.1f} MB CSV")
        t_e = t_b = cpu_e = cpu_b = float("inf")
        for _ in range(args.repeat):
            w0, c0 = time.perf_counter(), time.process_time()
            names_e, theta_e = eloledger_fit(path)
            t_e = min(t_e, time.perf_counter() - w0)
            cpu_e = min(cpu_e, time.process_time() - c0)
            w0, c0 = time.perf_counter(), time.process_time()
            names_b, theta_b = baseline_fit(path)
            t_b = min(t_b, time.perf_counter() - w0)
            cpu_b = min(cpu_b, time.process_time() - c0)
    order = [names_b.index(n) for n in names_e]
    delta = np.abs(to_elo(theta_e, 0) - to_elo(theta_b[order], 0)).max()
    print(
        f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}; best of {args.repeat} alternating runs"
    )
    print(
        f"eloledger (read_comparisons + aggregate + fit_bt): {t_e:8.3f} s wall {cpu_e:8.3f} s cpu"
    )
    print(
        f"baseline  (csv module + choix.ilsr_pairwise_dense): {t_b:8.3f} s wall {cpu_b:8.3f} s cpu"
    )
    print(f"ratio eloledger/baseline: {t_e / t_b:.3f} wall, {cpu_e / cpu_b:.3f} cpu  (goal <= 0.5)")
    print(f"max |ΔElo| between the estimates: {delta:.5f}")


if __name__ == "__main__":
    main()
