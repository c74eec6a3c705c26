"""The guide's direction audit over the run index: is the eval getting better or only dearer?

The audit groups the index per ISO week (or per run) and flags **cost drift**: tokens per task
rise (by more than ``DRIFT_TOKENS``) while the n=1 pass rate does not rise (by more than
``DRIFT_PASS``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eloledger.tables import Column

DRIFT_TOKENS = 0.10  # tokens per task up more than 10% ...
DRIFT_PASS = 0.01  # ... while the n=1 pass rate rises by at most 1 pp
# What `eloledger audit` and the History view's audit table show (one row per week or run).
AUDIT_COLUMNS = (
    Column("period", "period"),
    Column("runs", "runs"),
    Column("mean_output_tokens", "out/call", 0, group=True),
    Column("tokens_per_task", "tok/task", 0, group=True),
    Column("bestofn_share", "BoN share", 2),
    Column("retries", "retries"),
    Column("pass_at_1_n1", "n=1 pass", 3),
    Column("flag", "flag"),
)


def audit_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`audit` rows for :data:`AUDIT_COLUMNS` (the flag spelled out)."""
    return [{**r, "flag": "COST DRIFT" if r["cost_drift"] else ""} for r in rows]


def audit(
    entries: Sequence[Mapping[str, Any]], *, by: str = "week", since: str | None = None
) -> list[dict[str, Any]]:
    """The direction audit per ISO week or per run, with the cost-drift flag."""
    if since is not None:
        entries = [e for e in entries if str(e.get("time_utc", "")) >= since]
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for e in entries:
        if by == "run":
            key = str(e.get("run_id") or e.get("time_utc"))
        else:
            year, week, _ = dt.datetime.fromisoformat(str(e["time_utc"])).isocalendar()
            key = f"{year}-W{week:02d}"
        groups.setdefault(key, []).append(e)
    out: list[dict[str, Any]] = []
    for key, members in groups.items():
        arms = [a for e in members for a in e["arms"].values()]
        single = [a["pass_at_1"] for a in arms if a.get("samples_per_session", 1) <= 1 and a.get("pass_at_1") is not None]  # fmt: skip
        lengths = [a["mean_output_tokens"] for a in arms if a.get("mean_output_tokens") is not None]
        row = {
            "period": key,
            "runs": len(members),
            "mean_output_tokens": _mean(lengths),
            "tokens_per_task": _mean([a["tokens_per_task"] for a in arms]),
            "bestofn_share": _mean([float(a.get("samples_per_session", 1) > 1) for a in arms]),
            "retries": sum(int(a.get("retries") or 0) for a in arms),
            "pass_at_1_n1": _mean(single),
            "cost_drift": False,
        }
        if out:
            prev = out[-1]
            up = _grew(prev["tokens_per_task"], row["tokens_per_task"], DRIFT_TOKENS)
            flat = (
                prev["pass_at_1_n1"] is None
                or row["pass_at_1_n1"] is None
                or row["pass_at_1_n1"] - prev["pass_at_1_n1"] <= DRIFT_PASS
            )
            row["cost_drift"] = bool(up and flat)
        out.append(row)
    return out


def _grew(old: float | None, new: float | None, share: float) -> bool:
    return old is not None and new is not None and old > 0 and new > old * (1 + share)


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 6) if values else None
