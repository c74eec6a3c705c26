"""The run index and the guide's direction audit (issue 20 item 8).

Every indexed run is one JSON line in ``$XDG_DATA_HOME/eloledger/runs.jsonl`` (default
``~/.local/share/eloledger/runs.jsonl``): run id, ledger and task-set hashes, and per arm the
billed tokens, tokens per task, pass@1 of the submitted answers, samples per session, mean
output length, retries and p95 latency. The audit groups the index per ISO week (or per run)
and flags **cost drift**: tokens per task rise (by more than ``DRIFT_TOKENS``) while the n=1
pass rate does not rise (by more than ``DRIFT_PASS``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from eloledger.errors import UserError

DRIFT_TOKENS = 0.10  # tokens per task up more than 10% ...
DRIFT_PASS = 0.01  # ... while the n=1 pass rate rises by at most 1 pp


def index_path() -> Path:
    """Where the run index lives (XDG data dir)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "eloledger" / "runs.jsonl"


def run_entry(ledgers: Any, *, spec_sha256: str | None = None) -> dict[str, Any]:
    """One index line for the run in ``ledgers`` (files, globs or folders)."""
    import numpy as np

    from eloledger import __version__
    from eloledger.rating.budget_io import ledger_fingerprint, load_rows
    from eloledger.rating.gates import latency_by_arm
    from eloledger.rating.outcomes import arm_outcomes, ledger_results

    rows, _ = load_rows(ledgers)
    if not rows:
        raise UserError("ledger: no rows to index", fix="index a ledger that holds calls")
    outcomes, _ = arm_outcomes(rows, results=ledger_results(ledgers))
    latency = latency_by_arm(rows)
    out_len: dict[str, list[float]] = {}
    retries: dict[str, int] = {}
    for r in rows:
        if str(r.get("role") or "sample") != "sample" or r.get("arm") is None:
            continue
        arm = str(r["arm"])
        if isinstance(r.get("completion_tokens"), (int, float)):
            out_len.setdefault(arm, []).append(float(r["completion_tokens"]))
        if (r.get("attempt") or 0) > 0 or r.get("will_retry"):
            retries[arm] = retries.get(arm, 0) + 1
    arms = {}
    for arm, o in sorted(outcomes.items()):
        arms[arm] = {
            "tokens": o.total_tokens,
            "tokens_per_task": round(o.tokens_per_task, 3),
            "pass_at_1": round(o.solved / o.sessions, 6) if o.scored and o.sessions else None,
            "samples_per_session": round(
                sum(o.per_task_calls.values()) / o.sessions if o.sessions else 0.0, 3
            ),
            "mean_output_tokens": round(float(np.mean(out_len[arm])), 3)
            if out_len.get(arm)
            else None,
            "retries": retries.get(arm, 0),
            "latency_p95_ms": latency.get(arm, {}).get("p95"),
        }
    stamps = [float(r["ts"]) for r in rows if isinstance(r.get("ts"), (int, float))]
    when = dt.datetime.fromtimestamp(max(stamps), dt.timezone.utc) if stamps else None
    tasks = sorted({str(r["task_id"]) for r in rows if r.get("task_id") is not None})
    prints = ledger_fingerprint(ledgers)
    return {
        "kind": "eloledger.run",
        "run_id": ",".join(sorted({str(r["run_id"]) for r in rows if r.get("run_id")})) or None,
        "time_utc": (when or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds"),
        "spec_sha256": spec_sha256,
        "task_set_sha256": hashlib.sha256("\n".join(tasks).encode()).hexdigest(),
        "ledger_sha256": [f["sha256"] for f in prints.get("files", [prints])],
        "tasks": len(tasks),
        "arms": arms,
        "verdicts": [],
        "eloledger_version": __version__,
    }


def append_entry(entry: Mapping[str, Any], path: Path | None = None) -> Path:
    """Append one run to the index (one line, written in one call)."""
    path = path or index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
    return path


def read_index(path: Path | None = None) -> list[dict[str, Any]]:
    """Every indexed run, oldest first; a bad line is a one-line error naming it."""
    path = path or index_path()
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{n}: not JSON ({exc.msg})", fix="delete that line") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("arms"), dict):
            raise UserError(f"{path}:{n}: not a run entry", fix="delete that line")
        out.append(entry)
    return sorted(out, key=lambda e: str(e.get("time_utc")))


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
