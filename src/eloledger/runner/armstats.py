"""Per-arm call statistics of a run, from the ledger state after sampling.

Each arm: calls (final attempts), ok, errors with their classes, tokens (every sample row,
retries included: the arm's cost), the share of ok calls cut by ``max_tokens``, the judge
calls without a verdict that concern it and the p50/p95 latency of its ok calls (the same
numbers as ``tokens`` and ``elo --ledger``). Agent arms have neither ``max_tokens`` nor a
cut-off share (None).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from eloledger.ledger.summary import latency_stats
from eloledger.runner.spec import ExperimentSpec
from eloledger.runner.state import LedgerState


def arm_stats(
    spec: ExperimentSpec, state: LedgerState, judge_no_verdict: dict[str, int]
) -> list[dict[str, Any]]:
    """One dict per arm; ``error_classes`` maps ``(error_class, http_status)`` to a count."""
    stats: dict[str, dict[str, Any]] = {}
    for arm in spec.arms:
        stats[arm.name] = {
            "arm": arm.name, "kind": arm.kind, "n": arm.n, "select": arm.select,
            "max_tokens": arm.max_tokens, "same_budget": arm.same_budget,
            "calls": 0, "ok": 0, "errors": 0, "length": 0, "tokens": 0,
            "error_classes": Counter(), "judge_no_verdict": judge_no_verdict.get(arm.name, 0),
            "rounds": arm.rounds, "model": arm.model or spec.model, "profile": arm.profile,
            "prompt_hash": arm.prompt_hash, "system": arm.system,
            "prompt_template": arm.prompt_template,
        }  # fmt: skip
    for (_, arm_name, _, _, _), row in state.finals.items():
        s = stats.get(arm_name)
        if s is None:
            continue
        s["calls"] += 1
        if row.get("status") == "ok":
            s["ok"] += 1
            s["length"] += row.get("finish_reason") == "length"
        else:
            s["errors"] += 1
            s["error_classes"][(row.get("error_class"), row.get("http_status"))] += 1
    latency: dict[str, list[float]] = {name: [] for name in stats}
    for row in state.sample_rows:
        s = stats.get(str(row.get("arm")))
        if s is not None:
            s["tokens"] += int(row.get("total_tokens") or 0)
            if row.get("status") == "ok" and isinstance(row.get("latency_ms"), (int, float)):
                latency[s["arm"]].append(float(row["latency_ms"]))
    for name, values in latency.items():  # the p50/p95 that tokens and elo --ledger print
        got = latency_stats(np.asarray(values, dtype=float))
        stats[name]["latency_p50_ms"], stats[name]["latency_p95_ms"] = got["p50"], got["p95"]
    for s in stats.values():
        s["length_rate"] = s["length"] / s["ok"] if s["ok"] else None
        if s["kind"] == "agent":  # a CLI session has no max_tokens and no finish_reason
            s["max_tokens"] = s["length"] = s["length_rate"] = None
    return list(stats.values())


def json_friendly(arms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same stats with ``error_classes`` keyed by text (``"auth 401"``) for JSON output."""
    return [
        {
            **s,
            "error_classes": {
                f"{cls}" + (f" {status}" if status else ""): n
                for (cls, status), n in s["error_classes"].items()
            },
        }
        for s in arms
    ]
