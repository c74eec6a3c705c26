"""The named baseline of the rating benchmarks: Python's ``csv`` module, names mapped with a
dict, the win matrix built with ``np.add.at``, then ``choix.ilsr_pairwise_dense``.

Imported by bench_bt.py (in process) and run as a script by bench_intervals.py (a fresh
process, like the ``eloledger`` CLI it is timed against). It imports nothing from eloledger.

    python bench/baseline_choix.py comparisons.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import choix
import numpy as np


def baseline_fit(path: Path) -> tuple[list[str], np.ndarray]:
    index: dict[str, int] = {}
    ia: list[int] = []
    ib: list[int] = []
    out: list[float] = []
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        next(reader)
        for _task, a, b, o in reader:
            ia.append(index.setdefault(a, len(index)))
            ib.append(index.setdefault(b, len(index)))
            out.append(float(o))
    n = len(index)
    ai, bi, oc = np.array(ia), np.array(ib), np.array(out)
    mat = np.zeros((n, n))
    np.add.at(mat, (ai, bi), oc)
    np.add.at(mat, (bi, ai), 1.0 - oc)
    theta = choix.ilsr_pairwise_dense(mat, alpha=0.0)
    return list(index), theta


if __name__ == "__main__":
    names, theta = baseline_fit(Path(sys.argv[1]))
    print(f"{len(names)} players fitted")
