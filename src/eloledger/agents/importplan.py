"""How many processes read an import's logs: chosen from what its first files cost to read.

Why measured, not fixed: a worker only pays for files that cost much more to read than to hand
over. Handing a file to a worker costs the parent about as much as reading a 16 KB session
(an open and a stat to find its new bytes, then unpickling and applying its calls), so a
real ``~/.claude/projects`` of 8,000 short sessions was 2.5x slower with a pool than without
one; a few 15 MB sessions read in about half the time with two. The parent therefore reads
the oldest files itself for a short sample (``SAMPLE_S``, or ``SAMPLE_SHARE`` of the new
bytes), measures its cost per byte, estimates the cost of each remaining file from its size
and starts workers for the rest only when a file costs ``POOL_FILE_S`` or more and the rest
``POOL_WORK_S`` or more, one per idle core (a worker on a machine whose cores other jobs keep
busy only adds CPU). Nothing sampled is read twice.

``ELOLEDGER_IMPORT_WORKERS=N`` skips the sample: N processes from the first file (1: serial).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Below this many new bytes one process is faster than starting a second one.
POOL_BYTES = 16 << 20
SAMPLE_S = 0.02  # the serial sample: this much CPU time ...
SAMPLE_SHARE = 0.05  # ... or this share of the new bytes, whichever comes first
POOL_FILE_S = 0.002  # a file worth a worker: ~20x what handing it over costs the parent
POOL_WORK_S = 0.25  # and enough of them to repay forking and the results' way back
MOST_WORKERS = 4


@dataclass(frozen=True)
class Sample:
    """What the serial start of an import cost: ``seconds`` for ``files`` holding ``nbytes``."""

    seconds: float
    files: int
    nbytes: int


@dataclass(frozen=True)
class Plan:
    """The choice and what it was made from (shown in ``import --format json``)."""

    workers: int
    sample: Sample | None = None
    file_s: float = 0.0  # estimated cost of one remaining file
    rest_s: float = 0.0  # estimated serial cost of all the remaining files

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"workers": self.workers}
        if self.sample is not None:
            data.update(
                sample_files=self.sample.files,
                sample_bytes=self.sample.nbytes,
                sample_s=round(self.sample.seconds, 4),
                file_s=round(self.file_s, 6),
                rest_s=round(self.rest_s, 3),
            )
        return data


def choose_workers(sample: Sample, rest_files: int, rest_bytes: int, most: int) -> Plan:
    """The processes for the remaining files: 1 (the parent alone) unless each costs enough."""
    if most < 2 or rest_files < 2 or sample.nbytes <= 0:
        return Plan(1, sample)
    per_byte = sample.seconds / sample.nbytes
    rest_s = per_byte * rest_bytes
    file_s = rest_s / rest_files
    workers = min(most, rest_files) if file_s >= POOL_FILE_S and rest_s >= POOL_WORK_S else 1
    return Plan(workers, sample, file_s, rest_s)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cores() -> int:
    """Cores no other job is using, by the 1-minute load average (at least 1).

    On a machine whose cores are all busy a worker only takes CPU from the other jobs and
    from the parent: an import there reads serially, whatever its files cost.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cores()
    return max(1, cores() - int(load))


def forced_workers() -> int | None:
    """``ELOLEDGER_IMPORT_WORKERS`` when set to a number, else None (measure)."""
    wanted = os.environ.get("ELOLEDGER_IMPORT_WORKERS", "")
    return int(wanted) if wanted.isdigit() else None


def scan_planned(
    scanner: Any,
    paths: Sequence[Path],
    sizes: Sequence[int],
    *,
    child_closes: Sequence[int] = (),
    clock: Callable[[], float] = time.process_time,
) -> Plan:
    """Scan ``paths`` (new bytes ``sizes``) with ``scanner``, serially or with workers.

    ``child_closes``: descriptors a worker closes at once (the import's lock: a worker forked
    after it was taken must not keep it held). The sample is timed in CPU seconds: what a
    worker would take over, the same on a machine other jobs keep busy.
    """
    forced = forced_workers()
    most = forced if forced is not None else min(idle_cores(), MOST_WORKERS)
    total = sum(sizes)
    if most < 2 or len(paths) < 2 or total < POOL_BYTES:
        scanner.scan(paths)
        return Plan(1)
    at = 0
    if forced is not None:
        plan = Plan(forced)
    else:
        start, done = clock(), 0
        while at < len(paths):
            scanner.scan_file(paths[at])
            done += sizes[at]
            at += 1
            if clock() - start >= SAMPLE_S or done >= SAMPLE_SHARE * total:
                break
        sample = Sample(clock() - start, at, done)
        plan = choose_workers(sample, len(paths) - at, total - done, most)
    rest = paths[at:]
    if plan.workers < 2 or len(rest) < 2:
        scanner.scan(rest)
        return plan
    from eloledger.agents.forkpool import ForkPool

    with ForkPool(min(plan.workers, len(rest)), child_closes=child_closes) as pool:
        scanner.scan(rest, pool)
    return plan
