"""Judge calls that named no verdict, counted per arm pair from the ledger's ``judge`` rows.

A judge reply that names neither A, B nor TIE (or a judge call that failed) is not a tie: the
run leaves a match with no verdict in either order out of the comparisons and counts it. The
count is derived from the ledger (the single source of truth, like every selection), so
``eloledger elo --ledger`` reports the same number as the run summary did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from eloledger.judges.llm import parse_verdict


def verdict_counts(
    paths: str | Path | Iterable[str | Path],
) -> tuple[int, Counter[str]]:
    """``(judge calls, calls without a verdict per pair label)`` over the ledgers' final rows.

    Only lines that mention ``judge`` are parsed, so a sample-only ledger costs one scan. A
    call found in several ledgers (overlapping shards) counts once: rows share one key space.
    """
    finals: dict[tuple, dict[str, Any]] = {}
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        _scan_judge_rows(Path(path), finals)
    missing: Counter[str] = Counter()
    for row in finals.values():
        ok = row.get("status") == "ok"
        if not ok or parse_verdict(row.get("content")) is None:
            missing[str(row.get("arm"))] += 1
    return len(finals), missing


def _scan_judge_rows(path: Path, finals: dict[tuple, dict[str, Any]]) -> None:
    """Keep each judge call's final row (an ok row wins over a failed attempt)."""
    with open(path, "rb") as fh:
        for line in fh:
            if b"judge" not in line:
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a torn or foreign line: the ledger reader reports those
            if not isinstance(row, dict) or row.get("role") != "judge":
                continue
            if row.get("status") != "ok" and row.get("will_retry"):
                continue
            key = tuple(
                row.get(k) for k in ("run_id", "task_id", "arm", "session", "sample", "round")
            )
            if finals.get(key, {}).get("status") != "ok":
                finals[key] = row


def verdict_warning(calls: int, missing: Counter[str] | dict[str, int]) -> str | None:
    """The warning line for verdict-less judge calls (None when every call had a verdict)."""
    total = sum(missing.values())
    if not total:
        return None
    pairs = ", ".join(f"{k}: {n}" for k, n in sorted(missing.items()))
    return (
        f"{total} of {calls} judge calls gave no verdict ({pairs}): a match with no verdict "
        "in either order is left out, never counted as a tie"
    )


def mostly_missing(calls: int, missing: Counter[str] | dict[str, int]) -> bool:
    return sum(missing.values()) * 2 > calls
