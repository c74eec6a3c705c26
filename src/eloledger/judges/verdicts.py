"""Judge calls that named no verdict, counted per arm pair and per judge from the ledger.

A judge reply whose final line is no ``VERDICT:`` line (or a judge call that failed) is not a
tie: the run leaves a match with no verdict in either order out of the comparisons and counts
it. The count is derived from the ledger (the single source of truth, like every selection),
so ``eloledger elo --ledger`` reports the same number as the run summary did, with each judge
model's rate of replies without a verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eloledger.judges.llm import parse_verdict
from eloledger.judges.rows import judge_label
from eloledger.ledger.reader import numbered_rows


def verdict_counts(
    paths: str | Path | Iterable[str | Path],
) -> tuple[int, Counter[str], dict[str, tuple[int, int]]]:
    """``(judge calls, calls without a verdict per pair label, {judge model: (calls, without
    a verdict)})`` over the ledgers' final rows.

    Only lines that mention ``judge`` are parsed, so a sample-only ledger costs one scan. A
    call found in several ledgers (overlapping shards) counts once: rows share one key space.
    """
    finals: dict[tuple, dict[str, Any]] = {}
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        _scan_judge_rows(Path(path), finals)
    missing: Counter[str] = Counter()
    per_judge: dict[str, tuple[int, int]] = {}
    for row in finals.values():
        ok = row.get("status") == "ok"
        lost = not ok or parse_verdict(row.get("content")) is None
        if lost:
            missing[judge_label(row)] += 1
        model = str(row.get("model") or "?")
        calls, without = per_judge.get(model, (0, 0))
        per_judge[model] = (calls + 1, without + lost)
    return len(finals), missing, per_judge


def _scan_judge_rows(path: Path, finals: dict[tuple, dict[str, Any]]) -> None:
    """Keep each judge call's final row (an ok row wins over a failed attempt); the ledger
    reader's rules, so aliases and a torn last line read as every view reads them."""
    for _number, _line, row in numbered_rows(path, keep=b"judge"):
        if row.get("role") != "judge":
            continue
        if row.get("status") != "ok" and row.get("will_retry"):
            continue
        key = (
            row.get("run_id"),
            row.get("task_id"),
            judge_label(row),
            *(row.get(k) for k in ("session", "sample", "round")),
        )
        if finals.get(key, {}).get("status") != "ok":
            finals[key] = row


def verdict_warning(
    calls: int,
    missing: Counter[str] | dict[str, int],
    per_judge: dict[str, tuple[int, int]] | None = None,
) -> str | None:
    """The warning line for verdict-less judge calls (None when every call had a verdict),
    with each judge model's rate when ``per_judge`` is given."""
    total = sum(missing.values())
    if not total:
        return None
    pairs = ", ".join(f"{k}: {n}" for k, n in sorted(missing.items()))
    rates = ", ".join(
        f"{model} {lost} of {n} ({100 * lost / n:.0f}%)"
        for model, (n, lost) in sorted((per_judge or {}).items())
        if n
    )
    return (
        f"{total} of {calls} judge calls gave no verdict ({pairs})"
        + (f"; without a verdict per judge: {rates}" if rates else "")
        + ": a match with no verdict in either order is left out, never counted as a tie"
    )


def mostly_missing(calls: int, missing: Counter[str] | dict[str, int]) -> bool:
    return sum(missing.values()) * 2 > calls
