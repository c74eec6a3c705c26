"""What an existing ledger already holds for an experiment, so ``--resume`` redoes only the rest.

A call is identified by ``(task_id, arm, session, sample, round)`` (``round`` > 0 only for the
later rounds of debate and refine arms, and for a judge call's order).
It is complete when the ledger has an ``ok`` row for it, or an error row that was final (not
``will_retry``). A call whose last row says ``will_retry`` (the process died while backing
off) continues with the next attempt number. With ``redo``, final errors of those classes (a
rejected key, exhausted quota: failures the user fixes before resuming) count as not done. The
rows are the main reader's (a torn last line ignored: the writer cuts it off before appending;
a whole last line without its newline read, and given one by the writer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.judges.rows import judge_label
from eloledger.ledger.reader import resume_rows

SampleKey = tuple[str, str, int, int, int]  # task_id, arm, session, sample, round (debate/refine)
JudgeKey = tuple[str, str, int, int, int]  # task_id, arm, session, sample (match), round (order)


@dataclass
class LedgerState:
    run_id: str | None = None
    rows: int = 0
    other_experiments: set[str] = field(default_factory=set)
    finals: dict[SampleKey, dict[str, Any]] = field(default_factory=dict)
    next_attempt: dict[SampleKey, int] = field(default_factory=dict)
    judges: dict[JudgeKey, dict[str, Any]] = field(default_factory=dict)
    judge_next_attempt: dict[JudgeKey, int] = field(default_factory=dict)
    sample_rows: list[dict[str, Any]] = field(default_factory=list)  # every sample row, in order
    judge_tokens: int = 0  # tokens of every judge row (never part of an arm's cost)


def read_state(path: Path, experiment: str, redo: frozenset[str] = frozenset()) -> LedgerState:
    """Fold the ledger's rows for ``experiment`` into a :class:`LedgerState`, read by the main
    reader (:func:`eloledger.ledger.reader.resume_rows`): both agree on every line."""
    state = LedgerState()
    for row in resume_rows(path):
        state.rows += 1
        if row.get("experiment") != experiment:
            if row.get("experiment"):
                state.other_experiments.add(str(row.get("experiment")))
            continue
        if state.run_id is None and row.get("run_id"):
            state.run_id = str(row["run_id"])
        role = row.get("role") or "sample"
        final = row.get("status") == "ok" or not row.get("will_retry", False)
        if row.get("status") != "ok" and row.get("error_class") in redo:
            final = False
        attempt = int(row.get("attempt") or 1)
        key = (
            str(row.get("task_id")),
            str(row.get("arm")),
            int(row.get("session") or 0),
            int(row.get("sample") or 0),
        )
        rkey = (*key, int(row.get("round") or 0))
        if role == "sample":
            key = rkey
            state.sample_rows.append(row)
            if key in state.finals and state.finals[key].get("status") == "ok":
                continue  # never let a later row replace an ok one
            if final:
                state.finals[key] = row
            state.next_attempt[key] = max(state.next_attempt.get(key, 1), attempt + 1)
        elif role == "judge":
            state.judge_tokens += int(row.get("total_tokens") or 0)
            jkey = (rkey[0], judge_label(row), *rkey[2:])  # keyed by what it compared
            if jkey in state.judges and state.judges[jkey].get("status") == "ok":
                continue
            if final:
                state.judges[jkey] = row
            state.judge_next_attempt[jkey] = max(state.judge_next_attempt.get(jkey, 1), attempt + 1)
    return state
