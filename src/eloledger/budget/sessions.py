"""Ledger rows -> sessions with cumulative tokens and best-so-far scores (for budget curves).

A *session* is an independent attempt sequence of one arm on one task: the rows sharing
``(task_id, arm, session)``, or, when a ledger has no ``session`` field, the whole
``(task_id, arm)`` sample sequence. Rows are put in call order by ``(sample, round)`` when
those fields are present, else kept in ledger order.

Token accounting (decided here, used by curves and fairness alike): the budget a session has
spent is the sum of ``total_tokens`` (or prompt + completion) over its ``sample``/``select``
rows **whatever their status** -- a failed call that reported usage was billed, so it counts
against the budget; it never carries a score. An ``ok`` row without usage gets the median
tokens of the arm's ``ok`` rows that do report usage (a warning says how many were imputed);
an error row without usage adds nothing (nothing is known to have been spent). ``judge`` and
``probe`` rows are never part of an arm's budget. (``eloledger tokens`` sums ok rows only,
because it reports a cost per call; a budget is what was spent, failures included.)

Scores: ``score`` when it is a finite number (negated for ``direction = "min"``: higher is
better everywhere), else ``passed`` as 1.0 / 0.0, else none. A scored task's row (a
``direction``, no ``passed``) has no pass/fail.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eloledger.errors import UserError
from eloledger.gcpause import collector_paused
from eloledger.ledger.schema import judgeable
from eloledger.rating.comparisons import is_scored_row, score_value

BUDGET_ROLES = ("sample", "select")


@dataclass(frozen=True)
class Session:
    """One attempt sequence: cumulative tokens after each call and the best score so far."""

    task: str
    arm: str
    key: str
    cum_tokens: np.ndarray  # float, non-decreasing, one entry per call
    best: np.ndarray  # running max of scores; -inf until the first scored call
    scores: np.ndarray | None = None  # each call's own score (NaN when unscored)

    @property
    def total_tokens(self) -> float:
        return float(self.cum_tokens[-1]) if len(self.cum_tokens) else 0.0

    @property
    def first_scored_tokens(self) -> float:
        """Tokens spent when the first score became available (inf if never)."""
        hit = np.flatnonzero(np.isfinite(self.best))
        return float(self.cum_tokens[hit[0]]) if len(hit) else math.inf

    def calls_at(self, budgets: np.ndarray) -> np.ndarray:
        """How many calls had completed within each budget."""
        return np.searchsorted(self.cum_tokens, np.asarray(budgets, dtype=float), side="right")

    def spent_at(self, budgets: np.ndarray) -> np.ndarray:
        """Tokens of the calls completed within each budget (0 before the first)."""
        idx = self.calls_at(budgets) - 1
        return np.where(idx >= 0, self.cum_tokens[np.maximum(idx, 0)], 0.0)

    def scored_at(self, budgets: np.ndarray) -> np.ndarray:
        """How many *scored* calls (samples) had completed within each budget."""
        if self.scores is None:
            return self.calls_at(budgets)
        done = np.concatenate([[0], np.cumsum(np.isfinite(self.scores))])
        return done[self.calls_at(budgets)]

    def best_at(self, budgets: np.ndarray) -> np.ndarray:
        """Best score among calls completed within each budget; -inf before the first one."""
        idx = np.searchsorted(self.cum_tokens, np.asarray(budgets, dtype=float), side="right") - 1
        out = np.full(len(idx), -np.inf)
        ok = idx >= 0
        out[ok] = self.best[idx[ok]]
        return out


@dataclass
class SessionSet:
    sessions: list[Session]
    warnings: list[str] = field(default_factory=list)

    def arms(self) -> list[str]:
        return sorted({s.arm for s in self.sessions})

    def of_arm(self, arm: str) -> list[Session]:
        return [s for s in self.sessions if s.arm == arm]


def row_tokens(row: Mapping[str, Any]) -> float | None:
    """Tokens a call reported: total_tokens, else prompt + completion, else None."""
    if row.get("usage_source") == "missing":
        return None
    total = _number(row.get("total_tokens"))
    if total is not None:
        return total
    prompt = _number(row.get("prompt_tokens"))
    completion = _number(row.get("completion_tokens"))
    if prompt is not None and completion is not None:
        return prompt + completion
    return None


def row_score(row: Mapping[str, Any]) -> float | None:
    """The score of a judged call: ``score`` if numeric, else ``passed`` as 1/0, else None.

    Judged calls are ok calls and agent sessions cut by their turn or time limit (scored on the
    files they left), as in the run's own comparisons (``ledger.schema.judgeable``).
    """
    if not judgeable(row):
        return None
    score = score_value(row)  # a scored task's "min" direction: lower is better
    if score is not None:
        return score
    passed = row.get("passed")
    if isinstance(passed, bool):
        return 1.0 if passed else 0.0
    if isinstance(passed, (int, float)) and passed in (0, 1):
        return float(passed)
    return None


def row_pass(row: Mapping[str, Any], threshold: float = 0.5) -> float | None:
    """1.0 / 0.0 for a judged call: ``passed`` when it says so, else ``score >= threshold``;
    None when the call was not judged (one rule for the Elo table, curves and fairness)."""
    if not judgeable(row):
        return None
    passed = row.get("passed")
    if isinstance(passed, (bool, int, float)) and passed in (0, 1):
        return float(passed)
    if passed is None and row.get("score") is None:
        return None  # not judged (most rows): what the rules below give, without running them
    if is_scored_row(row):
        return None  # a scored task has no pass/fail: its raw score is no share of tests
    score = row_score(row)
    if score is None:
        return None
    return 1.0 if score >= threshold else 0.0


def session_key(value: Any) -> str:
    """A session's key as text ("" when the ledger has none): ``0`` and ``"0"`` are one session."""
    if value is None or value == "":
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def budget_rows(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows that belong to an arm's budget (role sample/select; missing role = sample)."""
    return [r for r in rows if str(r.get("role") or "sample") in BUDGET_ROLES]


def build_sessions(rows: Iterable[Mapping[str, Any]]) -> SessionSet:
    """Group budget rows into sessions; impute missing usage on ok rows (with a warning)."""
    with collector_paused():  # tuples per row, and no cycle
        return _build_sessions(rows)


def _build_sessions(rows: Iterable[Mapping[str, Any]]) -> SessionSet:
    calls, warnings = _budget_calls(rows)
    groups: dict[tuple[str, str, str], list[tuple[tuple[float, float, int], float, float]]] = {}
    for index, group, tokens, row in calls:
        score = row_score(row)
        order = (_order_value(row.get("sample")), _order_value(row.get("round")), index)
        groups.setdefault(group, []).append((order, tokens, math.nan if score is None else score))
    sessions = []
    for (task, arm, key), items in sorted(groups.items()):
        items.sort(key=lambda c: c[0])
        tokens = np.array([c[1] for c in items], dtype=float)
        scores = np.array([c[2] for c in items], dtype=float)
        best = np.fmax.accumulate(np.where(np.isnan(scores), -np.inf, scores))
        sessions.append(Session(task, arm, key, np.cumsum(tokens), best, scores))
    return SessionSet(sessions, warnings)


def session_totals(
    rows: Iterable[Mapping[str, Any]],
) -> tuple[dict[tuple[str, str, str], float], list[str]]:
    """``{(task, arm, session): s.total_tokens}`` and the warnings of :func:`build_sessions`,
    without building each session's arrays (all ``arm_outcomes`` needs).

    Summed in ledger order: exact, hence equal to the sorted cumulative sum, while every
    count is a whole number and their magnitudes add up to less than 2**53 (then no partial
    sum in any order rounds); otherwise the sessions are built.
    """
    rows = rows if isinstance(rows, list) else list(rows)
    calls, warnings = _budget_calls(rows)  # (arm_outcomes, the caller, pauses the collector)
    totals: dict[tuple[str, str, str], float] = {}
    get = totals.get
    bound = 0.0
    for _, group, tokens, _ in calls:
        if not tokens.is_integer():
            break
        bound += abs(tokens)
        totals[group] = get(group, 0.0) + tokens
    else:
        if bound < 2**53:
            return dict(sorted(totals.items())), warnings
    built = build_sessions(rows)
    return {(s.task, s.arm, s.key): s.total_tokens for s in built.sessions}, built.warnings


def _budget_calls(
    rows: Iterable[Mapping[str, Any]],
) -> tuple[list[tuple[int, tuple[str, str, str], float, Mapping[str, Any]]], list[str]]:
    """Each budget row kept for a session: (index among budget rows, (task, arm, session),
    tokens as counted, the row); plus the imputation and left-out warnings."""
    kept = budget_rows(rows)
    if not kept:
        raise UserError(
            "ledger: no sample/select rows to build sessions from",
            fix="point eloledger at the run's ledger (rows with role sample or select)",
        )
    warnings: list[str] = []
    median_tokens = _median_ok_tokens_by_arm(kept)
    calls = []
    imputed: dict[str, int] = {}
    dropped: dict[str, int] = {}
    for index, row in enumerate(kept):
        task = row.get("task_id")
        arm = row.get("arm")
        if task is None or arm is None:
            dropped["no task_id/arm"] = dropped.get("no task_id/arm", 0) + 1
            continue
        task, arm = str(task), str(arm)
        tokens = row_tokens(row)
        if tokens is None:
            if str(row.get("status") or "ok") != "ok":
                tokens = 0.0
            elif arm in median_tokens:
                tokens = median_tokens[arm]
                imputed[arm] = imputed.get(arm, 0) + 1
            else:
                dropped[f"arm {arm} reports no usage"] = (
                    dropped.get(f"arm {arm} reports no usage", 0) + 1
                )
                continue
        calls.append((index, (task, arm, session_key(row.get("session"))), tokens, row))
    for arm, count in sorted(imputed.items()):
        warnings.append(
            f"arm {arm}: {count} ok call(s) without token usage counted at the arm's median "
            f"{median_tokens[arm]:g} tokens"
        )
    for why, count in sorted(dropped.items()):
        warnings.append(f"{count} row(s) left out of budget curves: {why}")
    if not calls:
        raise UserError(
            "ledger: no usable sessions (rows need task_id, arm and token usage)",
            fix="check that the ledger records task_id, arm and total_tokens",
        )
    return calls, warnings


def _median_ok_tokens_by_arm(rows: list[Mapping[str, Any]]) -> dict[str, float]:
    seen: dict[str, list[float]] = {}
    for row in rows:
        if str(row.get("status") or "ok") != "ok":
            continue
        tokens = row_tokens(row)
        if tokens is not None and row.get("arm") is not None:
            seen.setdefault(str(row["arm"]), []).append(tokens)
    return {arm: float(np.median(values)) for arm, values in seen.items()}


def _order_value(value: Any) -> float:
    number = _number(value)
    return -1.0 if number is None else number


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) else None
    return None
