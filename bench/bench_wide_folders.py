"""What an agent's many empty folders cost eloledger after its session, before and after.

An agent that leaves more folders than the copy's cap fails alone ("more than N folders: not
judged"); what is measured is how long eloledger then takes: the final copy (until it trips)
and the removal of its partial copy, then the removal of the agent's folders. Baseline
("daf11f8"): eloledger.safetree as of that commit, read from git: it counted a folder when it
made it in the copy (so it made N folders and removed them again) and removed folders one at
a time. Candidate ("now"): folders counted when listed (the copy trips before making any), and
the empty ones among many removed by several threads at once. Same folder, same caps and
skips as the final copy (:data:`eloledger.judges.workdir.CAPS`, its folder cap set by
``--cap``), alternating, ``--rounds`` times. On the disk of this checkout: a tmpfs would hide
what removal costs.

    .venv/bin/python bench/bench_wide_folders.py                    # 3,000 folders, cap 1,000
    .venv/bin/python bench/bench_wide_folders.py --folders 20000 --cap 5000 --rounds 1
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from eloledger import safetree
from eloledger.judges.workdir import CAPS, SKIP

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "daf11f8"


def _baseline() -> types.ModuleType:
    """eloledger.safetree as it was at :data:`BASELINE`."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BASELINE}:src/eloledger/safetree.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("safetree_baseline")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{BASELINE}:safetree.py", "exec"), module.__dict__)
    return module


def _session(module: types.ModuleType, base: Path, folders: int, cap: int) -> list[float]:
    """(copy, removing the copy, removing the agent's folders) in seconds, and folders made."""
    work = base / "work"
    work.mkdir()
    for i in range(folders):
        os.mkdir(work / f"e{i}")
    os.sync()  # each path starts from a quiet journal
    caps = module.Caps(**{**dataclasses.asdict(CAPS), "folders": cap})
    t0 = time.perf_counter()
    report = module.copy_tree(work, base / "copy" / "work", skip=SKIP, caps=caps)
    t1 = time.perf_counter()
    module.remove_tree(base / "copy")
    t2 = time.perf_counter()
    module.remove_tree(work)
    t3 = time.perf_counter()
    assert report.tripped == f"more than {cap:,} folders" and not work.exists(), report.tripped
    return [t1 - t0, t2 - t1, t3 - t2, report.folders]


def main(folders: int, cap: int, rounds: int) -> None:
    paths = {BASELINE: _baseline(), "now": safetree}
    base = Path(tempfile.mkdtemp(prefix="bench-wide-", dir=ROOT))
    totals = {name: [0.0, 0.0, 0.0] for name in paths}
    print(f"{folders:,} empty folders left by an agent; the copy's folder cap {cap:,}")
    print(f"{'round':<6} {'path':<8} {'copy s':>7} {'rm copy s':>10} {'rm agent s':>11} {'made':>6}")
    try:
        for n in range(1, rounds + 1):
            for name, module in paths.items():
                copy, rm_copy, rm_work, made = _session(module, base, folders, cap)
                for i, value in enumerate((copy, rm_copy, rm_work)):
                    totals[name][i] += value
                print(f"{n:<6} {name:<8} {copy:>7.2f} {rm_copy:>10.2f} {rm_work:>11.2f} {made:>6.0f}")
    finally:
        safetree.remove_tree(base)
    before, after = (sum(totals[name]) / rounds for name in paths)
    print(f"per session after its run: {BASELINE} {before:.2f} s, now {after:.2f} s "
          f"({before / max(after, 1e-9):.1f}x less)")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folders", type=int, default=3000)
    parser.add_argument("--cap", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    main(args.folders, args.cap, args.rounds)
