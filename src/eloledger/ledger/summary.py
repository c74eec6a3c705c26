"""The counting rules of token summaries, and the pieces every summary shares.

The summary itself is folded batch by batch by :class:`eloledger.ledger.tally.TokenTally`, the
one implementation (``tokens``, the TUI and a whole ledger in memory, as one batch, all use it);
this module holds what it and the other readers share: the rules below, the row masks they
rest on, latency percentiles and the JUDGE line.

Counting rules (the same everywhere, so the CLI, the TUI and the Elo table agree):

* Only rows whose ``role`` is in ``roles`` (default ``sample`` and ``select``) count; judge and
  probe calls are not part of an arm's cost.
* ``calls`` = ``ok`` + ``errors``: every row is one call (a retried attempt is a call too).
* Token sums (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) cover **ok rows with
  usage** only. An ok row without usage is counted in ``usage_missing`` and adds nothing, so it
  never passes for a zero-token success. Error rows are counted in ``errors``; if a server
  reported usage on failed calls, those tokens are left out of the sums and reported by
  the tally's warnings (they were spent, but they bought no answer, and putting them in the
  sums would make ``mean_total_tokens`` a cost per success instead of a cost per call).
* ``usage_estimated`` counts ok rows whose usage is eloledger's character estimate (the gateway
  sent none, typically on streams): they are in the sums, and ``estimated_token_share`` says how
  much of ``total_tokens`` they make, so an estimate never passes for a billed count.
* ``mean_total_tokens`` = ``total_tokens`` / (ok rows with usage).
* ``task_mean_total_tokens`` = the mean over tasks of each task's ``total_tokens`` in the group
  (tasks with at least one ok row with usage): normalise per task first, so that a few long
  tasks do not dominate an arm's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from eloledger.ledger.columns import COST_COLUMNS, SUMMARY_COLUMNS
from eloledger.ledger.reader import Ledger

__all__ = [
    "COST_COLUMNS",
    "SUMMARY_COLUMNS",
    "SUMMARY_FIELDS",
    "count_warnings",
    "counted_usage",
    "latency_stats",
    "unbilled_counts",
]

MISSING_NAME = "(none)"
SUMMARY_FIELDS = (
    "name",
    "calls",
    "ok",
    "errors",
    "usage_missing",
    "usage_estimated",
    "estimated_token_share",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "mean_total_tokens",
    "task_mean_total_tokens",
)
BY_CHOICES = ("arm", "task", "session", "model", "day", "project", "source", "run")
ARM_ROLES = ("sample", "select")
TOKEN_COUNT_COLUMNS = ("prompt_tokens", "completion_tokens", "total_tokens", "reasoning_tokens")
ABSURD_TOKENS = 1e12  # no single call is billed a trillion tokens


def counted_usage(
    known: np.ndarray, estimated: np.ndarray, prompt: np.ndarray, total: np.ndarray
) -> np.ndarray:
    """Rows whose usage counts: known, and not zero unless eloledger estimated it.

    The rule ``doctor --ledger`` applies (:func:`eloledger.doctor.ledger_audit._usage_missing`):
    an ok row with 0 total tokens, or an explicit 0 prompt tokens, is missing usage, never a
    free call; ``tokens``, ``elo --ledger`` and the TUI count it in ``usage_missing``. A row that
    gives only a total (no prompt count) is counted.
    """
    with np.errstate(invalid="ignore"):
        counted = (total > 0) & (prompt != 0)
    return known & (estimated | counted)


def unbilled_counts(
    counts: dict[str, np.ndarray], reasoning: Callable[[], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose counts no gateway bills: (fractional or absurd counts, a total that is not
    prompt + completion). ``counts``: whichever of the three token columns there are;
    ``reasoning`` is read only when a total does not add up (a gateway may count reasoning
    outside completion: total = prompt + completion + reasoning is fine)."""
    length = len(next(iter(counts.values()))) if counts else 0
    odd = np.zeros(length, dtype=bool)
    for column in counts.values():
        known = np.nan_to_num(column, nan=0.0)
        odd |= (known != np.floor(known)) | (known > ABSURD_TOKENS)
    bad = np.zeros(length, dtype=bool)
    if {"prompt_tokens", "completion_tokens", "total_tokens"} <= counts.keys():
        p, c, t = counts["prompt_tokens"], counts["completion_tokens"], counts["total_tokens"]
        with np.errstate(invalid="ignore"):
            bad = (t != p + c) & ~np.isnan(p + c + t)
        if bad.any():
            bad &= t != p + c + np.nan_to_num(reasoning(), nan=0.0)
    return odd, bad


def unbilled_warnings(odd: tuple[int, str], unequal: tuple[int, str]) -> list[str]:
    """The words for :func:`unbilled_counts`' rows: (how many, the first one's file:line)."""
    out = []
    if odd[0]:
        out.append(
            f"{odd[0]} row(s) have fractional or absurd (> 1e12) token counts, first at "
            f"{odd[1]}: check the tool that wrote them"
        )
    if unequal[0]:
        out.append(
            f"{unequal[0]} row(s) have total_tokens != prompt_tokens + completion_tokens, "
            f"first at {unequal[1]}: the sums use total_tokens; check which count the gateway "
            "bills"
        )
    return out


def count_warnings(ledger: Ledger) -> list[str]:
    """Token counts no gateway bills, in a ledger in memory (the tally's rule and words)."""
    counts = {n: ledger.number(n) for n in TOKEN_COUNT_COLUMNS[:3] if n in ledger}
    odd, bad = unbilled_counts(counts, lambda: ledger.load("reasoning_tokens"))
    first = [ledger.where(int(np.flatnonzero(m)[0])) if m.any() else "" for m in (odd, bad)]
    return unbilled_warnings((int(odd.sum()), first[0]), (int(bad.sum()), first[1]))


def _key(by: str) -> str:
    if by not in BY_CHOICES:
        raise ValueError(f"by must be one of {', '.join(BY_CHOICES)}, not {by!r}")
    return {"task": "task_id", "run": "run_id"}.get(by, by)


def _share(part: float, whole: float) -> float | None:
    return float(part / whole) if whole else None


def _number(value: float) -> int | float:
    """Token sums as ints when whole (they are, unless a ledger holds fractional counts)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def latency_stats(values: np.ndarray) -> dict[str, float | None]:
    """p50 and p95 of latencies in ms (NaN dropped): one definition for ``tokens``,
    ``elo --ledger``, the run summary and the fairness gates."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return {"n": 0, "p50": None, "p95": None}
    p50, p95 = np.percentile(finite, [50, 95])
    return {"n": int(len(finite)), "p50": round(float(p50), 3), "p95": round(float(p95), 3)}


def judge_group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JUDGE line from the judge's per-arm summaries (shared with ``ledger.tally``)."""
    keys = ("calls", "ok", "errors", "usage_missing", "usage_estimated")
    out: dict[str, Any] = {"name": "JUDGE", **{k: sum(r[k] for r in rows) for k in keys}}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        out[key] = sum(r[key] for r in rows)
    with_usage = out["ok"] - out["usage_missing"]
    out["mean_total_tokens"] = out["total_tokens"] / with_usage if with_usage else None
    out["by_arm"] = {r["name"]: r["total_tokens"] for r in rows}
    return out


def arm_latency(ledger: Ledger) -> dict[str, dict[str, float | None]]:
    """p50/p95 ``latency_ms`` of each arm's ok sample/select calls, from the columns (read the
    ledger with arm, role, status and latency_ms)."""
    arms = ledger.factor("arm")
    keep = ledger.factor("role").mask(*ARM_ROLES) & ledger.ok()
    latency = ledger.number("latency_ms")
    return {
        name: latency_stats(latency[keep & (arms.codes == code)])
        for code, name in enumerate(arms.levels)
    }
