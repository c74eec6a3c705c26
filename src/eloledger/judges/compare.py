"""From per-session arm results to within-task comparisons (``task_id,a,b,outcome``).

Within each task every arm is compared with every other arm. With several sessions the
outcome is the share of session pairs that ``a`` wins (ties count half), a soft outcome the
comparisons format accepts. Arms without a result on a task (every call failed) are skipped.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eloledger.fsutil import atomic_write
from eloledger.judges.extract import normalize


@dataclass
class ArmResult:
    """What one arm produced on one task in one session (a row of the results file)."""

    task_id: str
    arm: str
    session: int
    selected_sample: int | None  # None when no sample succeeded
    answer: str | None
    score: float | None
    passed: bool | None
    samples_ok: int
    samples: int
    content: str | None = None  # the selected reply (for the LLM judge; not written to CSV)
    tokens: int | None = None  # completion tokens of the selected reply (its ledger row)


def majority(answers: Sequence[str | None]) -> tuple[int | None, str | None]:
    """Index and value of the most common answer; ties go to the answer seen first."""
    keys = [normalize(a) for a in answers]
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        return None, None
    best = max(counts.values())
    for index, key in enumerate(keys):
        if key is not None and counts[key] == best:
            return index, answers[index]
    return None, None  # pragma: no cover


def score_comparisons(
    results: Iterable[ArmResult], arm_order: Sequence[str], lower_wins: Iterable[str] = ()
) -> list[tuple]:
    """``(task_id, a, b, outcome)`` for every pair of arms with a score on the task; on the
    tasks in ``lower_wins`` (scored with ``direction = "min"``) the lower score wins."""
    by_task: dict[str, dict[str, list[float]]] = {}
    low = set(lower_wins)
    for r in results:
        if r.score is None:
            continue
        score = -r.score if r.task_id in low else r.score
        by_task.setdefault(r.task_id, {}).setdefault(r.arm, []).append(score)
    rank = {name: i for i, name in enumerate(arm_order)}
    out: list[tuple] = []
    for task_id, arms in by_task.items():
        names = sorted(arms, key=lambda a: rank.get(a, len(rank)))
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                out.append((task_id, a, b, _soft_outcome(arms[a], arms[b])))
    return out


def _soft_outcome(a_scores: list[float], b_scores: list[float]) -> float:
    total = 0.0
    for x in a_scores:
        for y in b_scores:
            total += 1.0 if x > y else 0.5 if x == y else 0.0
    return total / (len(a_scores) * len(b_scores))


def with_lengths(rows: Iterable[tuple], results: Iterable[ArmResult]) -> list[tuple]:
    """``(task_id, a, b, outcome, a_tokens, b_tokens)``: each side's output length is the mean
    completion tokens of its selected answers on that task (over sessions; None if unknown),
    for ``eloledger elo --length-control``."""
    seen: dict[tuple[str, str], list[int]] = {}
    for r in results:
        if r.tokens is not None:
            seen.setdefault((r.task_id, r.arm), []).append(r.tokens)
    mean = {key: sum(v) / len(v) for key, v in seen.items()}
    return [
        (task_id, a, b, outcome, mean.get((task_id, a)), mean.get((task_id, b)))
        for task_id, a, b, outcome, *_ in rows
    ]


def write_comparisons(path: Path, rows: Iterable[tuple]) -> int:
    """Write ``task_id,a,b,outcome`` (plus ``a_tokens,b_tokens`` for rows from
    ``with_lengths``) atomically (temp file + rename); returns the row count."""
    rows = list(rows)
    if any(len(row) > 4 for row in rows):
        return _write_csv(
            path,
            ["task_id", "a", "b", "outcome", "a_tokens", "b_tokens"],
            (
                [task_id, a, b, _fmt(outcome), _tok(a_tok), _tok(b_tok)]
                for task_id, a, b, outcome, a_tok, b_tok in rows
            ),
        )
    return _write_csv(
        path,
        ["task_id", "a", "b", "outcome"],
        ([task_id, a, b, _fmt(outcome)] for task_id, a, b, outcome in rows),
    )


def _tok(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def write_results(path: Path, results: Iterable[ArmResult]) -> None:
    fields = [
        "task_id", "arm", "session", "selected_sample", "answer", "score", "passed",
        "samples_ok", "samples",
    ]  # fmt: skip
    _write_csv(
        path,
        fields,
        (
            [
                r.task_id,
                r.arm,
                r.session,
                "" if r.selected_sample is None else r.selected_sample,
                "" if r.answer is None else r.answer,
                "" if r.score is None else _fmt(r.score),
                "" if r.passed is None else int(r.passed),
                r.samples_ok,
                r.samples,
            ]  # fmt: skip
            for r in results
        ),
    )


def _write_csv(path: Path, header: list[str], rows: Iterable[list]) -> int:
    """Written whole and atomically: a reader sees the old file or the whole new one."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    atomic_write(path, buf.getvalue())
    return count


def _fmt(value: float) -> str:
    return "1" if value == 1 else "0" if value == 0 else "0.5" if value == 0.5 else f"{value:.6g}"
