"""What each arm spent and solved, per task and session: the one count behind every face.

*Tokens per success* is an arm's billed tokens divided by the tasks it **solved** -- one
success per session (an independent attempt at a task), judged on the answer the arm
*submits* -- never by its passing samples. A best-of-8 arm that spends 8,000 tokens a task
and solves 88.5% of them costs ~9,040 tokens per solved task, not the ~1,966 a per-sample
count would say (the guides' ``tokens_per_success``). The same count feeds
``eloledger elo --ledger`` (table and JSON), the TUI's Elo tab and ``eloledger fairness``.

The submitted answer of a session, in this order:

1. the run's results file (``<ledger>.results.csv`` beside the ledger, written by
   ``eloledger run``: the sample the arm selected, with its ``passed``/``score``);
2. else the last scored ``select`` row of the session;
3. else the session's only scored sample (a single-sample arm);
4. else (several scored samples, no record of the pick) the session counts as solved when
   any sample passes -- the oracle pass@n, an upper bound -- and a warning names the arm.

A session whose calls all failed submitted nothing: it counts as an unsolved attempt
(informative missingness: a crash is not a skipped task). Per-sample accuracy (the share of
scored samples that pass) and the unbiased pass@k of the samples (Chen et al. 2021, with
``k`` = scored samples per session, the smallest over the arm's tasks) are reported under
their own names.

Tokens: billed tokens count everywhere -- every ``sample``/``select`` call with reported usage,
failed calls included, judge and probe calls never (the rule of
:mod:`eloledger.budget.sessions`, shared with curves and fairness). An ok call whose
usage says zero (0 total, or an explicit 0 prompt tokens, not estimated) is usage the gateway
did not pass on, never a free call -- the rule of ``tokens`` and ``doctor --ledger``
(``ledger.summary.counted_usage``): in an arm whose other calls report usage it counts as
missing usage, at the arm's median, and as ESTIMATED in the arm's token share; an arm none of
whose calls report usage keeps no token cost, so its Elo per token stays empty.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.budget.sessions import (
    BUDGET_ROLES,
    row_pass,
    row_tokens,
    session_key,
    session_totals,
)
from eloledger.errors import CodedWarning
from eloledger.gcpause import collector_paused

PASS_THRESHOLD = 0.5
RESULTS_SUFFIX = ".results.csv"


@dataclass
class ArmOutcome:
    """One arm's billed tokens and solved sessions (what the Elo table's cost columns use)."""

    arm: str
    tasks: int  # tasks with at least one session of the arm
    sessions: int  # sessions over all tasks
    tokens_per_task: float  # mean over tasks of billed tokens per session
    total_tokens: float  # billed tokens over all sessions (numerator of tokens per success)
    solved: int  # sessions whose submitted answer passes
    per_task_sessions: dict[str, int] = field(default_factory=dict)
    per_task_solved: dict[str, int] = field(default_factory=dict)
    per_task_n: dict[str, int] = field(default_factory=dict)  # scored samples
    per_task_c: dict[str, int] = field(default_factory=dict)  # passing samples
    per_task_tokens: dict[str, float] = field(default_factory=dict)  # billed, all sessions
    per_task_calls: dict[str, int] = field(default_factory=dict)  # sample calls made
    k: int | None = None  # scored samples per session, smallest over the arm's tasks
    scored: bool = False  # any pass/fail known at all (else the pass columns stay empty)
    submitted: str = "single"  # where the submitted answers came from (see the module doc)
    usage_estimated: int = 0
    estimated_token_share: float = 0.0

    @property
    def tokens_per_success(self) -> float | None:
        """Billed tokens per solved task (None when nothing was solved or scored)."""
        return self.total_tokens / self.solved if self.scored and self.solved else None


def results_path(ledger: str | os.PathLike[str]) -> Path:
    """``runs/x.jsonl`` -> ``runs/x.results.csv`` (the name ``eloledger run`` writes)."""
    path = Path(ledger)
    name = path.name
    for ext in (".jsonl", ".ndjson", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    name = name.removesuffix(".ledger")
    return path.with_name(name + RESULTS_SUFFIX)


def read_results(paths: Iterable[Path], threshold: float = PASS_THRESHOLD) -> dict[tuple, float]:
    """(task, arm, session) -> 1.0/0.0 for the submitted answer of every results row that has
    one (a results row with neither ``passed`` nor ``score`` is left to the ledger)."""
    out: dict[tuple, float] = {}
    for path in paths:
        with open(path, newline="", encoding="utf-8") as fh:
            for rec in csv.DictReader(fh):
                passed = _result_pass(rec, threshold)
                if passed is not None and rec.get("task_id") and rec.get("arm"):
                    key = (rec["task_id"], rec["arm"], session_key(rec.get("session")))
                    out[key] = passed
    return out


def _result_pass(rec: Mapping[str, Any], threshold: float) -> float | None:
    passed = (rec.get("passed") or "").strip().lower()
    if passed in ("1", "true"):
        return 1.0
    if passed in ("0", "false"):
        return 0.0
    try:
        score = float(rec.get("score") or "")
    except ValueError:
        return None
    return (1.0 if score >= threshold else 0.0) if math.isfinite(score) else None


def arm_outcomes(
    rows: Sequence[Mapping[str, Any]],
    *,
    results: Mapping[tuple, float] | None = None,
    threshold: float = PASS_THRESHOLD,
) -> tuple[dict[str, ArmOutcome], list[str]]:
    """Per-arm outcomes from ledger rows (and the run's submitted answers when known)."""
    with collector_paused():  # a tuple and a list per row, and no cycle
        return _arm_outcomes(rows, results, threshold)


def _arm_outcomes(
    rows: Sequence[Mapping[str, Any]], results: Mapping[tuple, float] | None, threshold: float
) -> tuple[dict[str, ArmOutcome], list[str]]:
    rows, imputed = zero_usage_as_missing(rows)
    spent, warnings = session_totals(rows)
    warnings = list(warnings)
    results = results or {}
    samples: dict[tuple[str, str, str], list[float]] = {}
    calls: dict[tuple[str, str], int] = {}
    selects: dict[tuple[str, str, str], float] = {}
    estimated: dict[str, list[float]] = {}
    unsandboxed: set[str] = set()
    for row in rows:
        role = str(row.get("role") or "sample")
        if role not in ("sample", "select") or row.get("task_id") is None or row.get("arm") is None:
            continue
        key = (str(row["task_id"]), str(row["arm"]), session_key(row.get("session")))
        if row.get("sandbox") == "none":
            unsandboxed.add(key[1])
        if role == "sample":
            calls[key[:2]] = calls.get(key[:2], 0) + 1
        tokens = row.get("total_tokens")
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
            guessed = row.get("usage_source") == "estimated"
            estimated.setdefault(key[1], [0, 0.0, 0.0])
            acc = estimated[key[1]]
            acc[0] += guessed
            acc[1] += float(tokens) if guessed else 0.0
            acc[2] += float(tokens)
        passed = row_pass(row, threshold)
        if passed is None:
            samples.setdefault(key, [])
            continue
        if role == "select":
            selects[key] = passed
        else:
            samples.setdefault(key, []).append(passed)
    out: dict[str, ArmOutcome] = {}
    oracle: dict[str, int] = {}
    by_arm: dict[str, list[tuple[str, str, str]]] = {}
    for key in sorted(spent):
        by_arm.setdefault(key[1], []).append(key)
    for arm, keys in by_arm.items():
        o = ArmOutcome(arm, 0, 0, 0.0, 0.0, 0)
        per_task_tokens = o.per_task_tokens
        sources: set[str] = set()
        for key in keys:
            task = key[0]
            o.sessions += 1
            o.total_tokens += spent[key]
            per_task_tokens[task] = per_task_tokens.get(task, 0.0) + spent[key]
            o.per_task_sessions[task] = o.per_task_sessions.get(task, 0) + 1
            scores = samples.get(key, [])
            o.per_task_n[task] = o.per_task_n.get(task, 0) + len(scores)
            o.per_task_c[task] = o.per_task_c.get(task, 0) + int(sum(scores))
            if key in results:
                win, source = results[key], "results"
            elif key in selects:
                win, source = selects[key], "select"
            elif len(scores) <= 1:
                win, source = (scores[0] if scores else 0.0), "single"
            else:
                win, source = max(scores), "any-pass"
                oracle[arm] = oracle.get(arm, 0) + 1
            o.scored |= bool(scores) or key in results or key in selects
            sources.add(source)
            o.solved += int(win)
            o.per_task_solved[task] = o.per_task_solved.get(task, 0) + int(win)
        o.tasks = len(per_task_tokens)
        o.per_task_calls = {t: calls.get((t, arm), 0) for t in per_task_tokens}
        o.tokens_per_task = float(
            np.mean([per_task_tokens[t] / o.per_task_sessions[t] for t in per_task_tokens])
        )
        per_session = [
            o.per_task_n[t] / o.per_task_sessions[t] for t in o.per_task_n if o.per_task_n[t]
        ]
        o.k = int(math.floor(min(per_session))) if per_session else None
        o.submitted = "+".join(sorted(sources))
        guess = estimated.get(arm)
        if arm in imputed:  # zero-usage calls, counted at the arm's median: estimated too
            count, tokens = imputed[arm]
            guess = guess or [0, 0.0, 0.0]
            guess = [guess[0] + count, guess[1] + tokens, guess[2] + tokens]
        if guess:
            o.usage_estimated = int(guess[0])
            o.estimated_token_share = guess[1] / guess[2] if guess[2] else 0.0
        out[arm] = o
    if unsandboxed:
        warnings.append(unsandboxed_warning(sorted(unsandboxed)))
    for arm, count in sorted(oracle.items()):
        warnings.append(
            f"arm {arm}: {count} session(s) with several scored samples and no record of the "
            "submitted answer (no results file, no select row): counted solved when any sample "
            "passes (the oracle pass@n, an upper bound); keep the run's .results.csv beside the "
            "ledger"
        )
    return out, warnings


def zero_usage(row: Mapping[str, Any]) -> bool:
    """An ok arm call whose usage says zero: usage the gateway dropped, never a free call."""
    if str(row.get("role") or "sample") not in BUDGET_ROLES:
        return False
    if str(row.get("status") or "ok") != "ok":
        return False
    if row.get("usage_source") in ("estimated", "missing"):
        return False
    return row.get("total_tokens") == 0 or row.get("prompt_tokens") == 0


def zero_usage_as_missing(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], dict[str, tuple[int, float]]]:
    """``rows`` with each zero-usage call marked ``usage_source = "missing"`` (so the budget
    counts it at its arm's median, with a warning), and per arm ``(calls, tokens)`` imputed.

    Only in arms that have a call with real usage: an arm with none keeps its zeros, which the
    Elo table reads as no token usage (empty token columns) rather than as a free arm.
    """
    zero = [zero_usage(r) for r in rows]
    if not any(zero):
        return list(rows), {}
    reported: dict[str, list[float]] = {}
    for row, is_zero in zip(rows, zero, strict=True):
        arm = row.get("arm")
        if is_zero or arm is None or str(row.get("status") or "ok") != "ok":
            continue
        if str(row.get("role") or "sample") in BUDGET_ROLES:
            tokens = row_tokens(row)
            if tokens is not None:
                reported.setdefault(str(arm), []).append(tokens)
    out: list[Mapping[str, Any]] = []
    imputed: dict[str, tuple[int, float]] = {}
    for row, is_zero in zip(rows, zero, strict=True):
        arm = str(row.get("arm"))
        if is_zero and arm in reported:
            out.append({**row, "usage_source": "missing"})
            count, tokens = imputed.get(arm, (0, 0.0))
            imputed[arm] = (count + 1, tokens + float(np.median(reported[arm])))
        else:
            out.append(row)
    return out, imputed


def unsandboxed_warning(arms: Sequence[str]) -> str:
    """The loud line for scores judged outside the sandbox (``[judge] sandbox = "none"``)."""
    return CodedWarning(
        "judge.unsandboxed",
        "UNSANDBOXED: judged with sandbox = \"none\" (the judged code ran as the user, and could "
        f"forge its score): {', '.join(arms)}",
    )


def ledger_results(ledgers: Any, threshold: float = PASS_THRESHOLD) -> dict[tuple, float]:
    """The submitted answers recorded in each ledger's results file (when it exists)."""
    from eloledger.ledger.sources import expand_ledgers

    single = isinstance(ledgers, (str, os.PathLike))
    paths = expand_ledgers([ledgers] if single else list(ledgers))
    return read_results([p for p in map(results_path, paths) if p.is_file()], threshold)


# What arm_outcomes reads of a row, as columns: the rows it gets hold just these.
OUTCOME_COLUMNS = (
    "role",
    "task_id",
    "arm",
    "session",
    "status",
    "error_class",
    "agent",
    "usage_source",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "score",
    "passed",
    "sample",
    "round",
    "sandbox",
    "direction",  # a scored task's sample has no pass/fail (row_pass); a "min" score is negated
)


def ledger_outcomes(
    ledgers: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    threshold: float = PASS_THRESHOLD,
) -> tuple[dict[str, ArmOutcome], list[str]]:
    """:func:`arm_outcomes` of one or several ledgers, with each ledger's results file
    (``<ledger>.results.csv``) when it exists; plus the readers' warnings and token counts
    no gateway bills (``ledger.summary.count_warnings``).

    Read by the columnar reader (bulk duplicate check): the rows handed to
    :func:`arm_outcomes` hold only :data:`OUTCOME_COLUMNS`, with the values the row reader
    gives (tests/rating/test_rating_ledger_outcomes.py compares the two).
    """
    from eloledger.ledger.merge import read_ledgers

    ledger = read_ledgers(ledgers, columns=OUTCOME_COLUMNS)
    return outcomes_of_ledger(ledger, ledgers, threshold=threshold)


def outcomes_of_ledger(
    ledger: Any, ledgers: Any, *, threshold: float = PASS_THRESHOLD
) -> tuple[dict[str, ArmOutcome], list[str]]:
    """:func:`ledger_outcomes` of ``ledger``, already read (with at least
    :data:`OUTCOME_COLUMNS`) from ``ledgers``: a caller that needs other columns of the same
    rows reads the files once."""
    from eloledger.ledger.summary import count_warnings

    results = ledger_results(ledgers, threshold)
    outcomes, more = arm_outcomes(column_rows(ledger), results=results, threshold=threshold)
    return outcomes, [*ledger.warnings, *count_warnings(ledger), *more]


def column_rows(ledger: Any) -> list[dict[str, Any]]:
    """Light row dicts from a columnar ledger: None where a value is missing, text as text,
    numbers as floats, ``passed`` as a bool and ``agent`` as whether the row names one. A
    field no row has is left out of every dict (``get`` gives None all the same; the guides'
    rows have 9 of these 17 fields: 1M dicts take a third less time and memory)."""
    from eloledger.ledger.columns import Factor

    names = [n for n in OUTCOME_COLUMNS if n in ledger and _any_value(n, ledger[n])]
    values = []
    for name in names:
        column = ledger[name]
        if isinstance(column, Factor):
            values.append(column.values())
        elif name in ("passed", "agent"):
            known = ~np.isnan(column)
            out = np.full(len(column), None, dtype=object)
            out[known] = column[known] != 0
            if name == "agent":
                out[~known] = False
            values.append(out.tolist())
        else:
            out = column.astype(object)
            out[np.isnan(column)] = None
            values.append(out.tolist())
    with collector_paused():  # a dict per row
        return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def _any_value(name: str, column: Any) -> bool:
    """Whether any row has a value in this column (every reader of ``agent`` asks only
    whether a row names one: a column of "none" is no column)."""
    from eloledger.ledger.columns import Factor

    if isinstance(column, Factor):
        return bool((column.codes >= 0).any())
    if name == "agent":
        return bool(np.nan_to_num(column).any())
    return bool((~np.isnan(column)).any())


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct: 1 − C(n−c, k)/C(n, k), computed as the
    stable product 1 − ∏_{i=n−c+1}^{n} (1 − k/i) (no huge binomials)."""
    if k <= 0 or n <= 0 or k > n:
        raise ValueError("need 0 < k <= n")
    if n - c < k:
        return 1.0
    i = np.arange(n - c + 1, n + 1, dtype=np.float64)
    return float(1.0 - np.prod(1.0 - k / i))
