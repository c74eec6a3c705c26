"""Which sample an arm puts forward on a task (one session), from its sample rows alone.

Selection is derived, never stored: ``single`` takes its one sample, ``best_of_n`` with a
verifier its best-scored sample, ``self_consistency`` the majority answer; ``best_of_n`` with a
judge starts from the first sample and :mod:`eloledger.runner.judging` refines it by a knockout.
"""

from __future__ import annotations

from typing import Any

from eloledger.judges.compare import ArmResult, majority
from eloledger.judges.extract import extract_answer
from eloledger.ledger.schema import judgeable
from eloledger.runner.spec import ArmSpec
from eloledger.runner.strategies import vote_kind
from eloledger.tasks import Task


def select(task: Task, arm: ArmSpec, session: int, rows: list[dict[str, Any]]) -> ArmResult:
    """The arm's result on the task; ``rows`` are its final sample rows, one per sample."""
    ok = [(i, r) for i, r in enumerate(rows) if judgeable(r)]
    result = ArmResult(task.task_id, arm.name, session, None, None, None, None, len(ok), arm.n)
    if not ok:
        return result
    kind = vote_kind(arm)  # a debate votes over its last round like self-consistency
    if kind == "self_consistency":
        answers = [extract_answer(r.get("content"), kind=answer_kind(task)) for _, r in ok]
        index, _ = majority(answers)
        chosen = ok[index if index is not None else 0]
    elif kind in ("best_of_n", "agent") and arm.select == "verifier":
        sign = -1.0 if task.direction == "min" else 1.0  # lower is better
        chosen = max(ok, key=lambda item: (sign * _score_of(item[1], sign), -item[0]))
    else:  # single, or judge selection (refined by the knockout)
        chosen = ok[0]
    fill(result, chosen, task)
    return result


def fill(result: ArmResult, chosen: tuple[int, dict[str, Any]], task: Task) -> None:
    """Put the chosen sample (index, row) into the arm's result."""
    index, row = chosen
    result.selected_sample = index
    result.content = row.get("content")
    result.answer = extract_answer(row.get("content"), kind=answer_kind(task))
    score = row.get("score")
    result.score = float(score) if isinstance(score, (int, float)) else None
    passed = row.get("passed")
    result.passed = bool(passed) if passed is not None else None
    tokens = row.get("completion_tokens")
    result.tokens = tokens if isinstance(tokens, int) and tokens >= 0 else None


def answer_kind(task: Task) -> str:
    """How to read a reply's answer for voting and the results file (see judges.extract)."""
    return task.kind if task.kind in ("numeric", "text") else "auto"


def _score_of(row: dict[str, Any], sign: float = 1.0) -> float:
    score = row.get("score")
    if isinstance(score, (int, float)):
        return float(score)
    return 0.0 if sign > 0 else float("inf")  # no score: last, whichever way is better
