"""Live run counters: plain numbers that producers bump and viewers pull on a timer.

Per-token work must never touch the UI (docs/observed/textual.md): a streaming call bumps these
attributes, and the TUI reads them about 10 times a second. The same object is rebuilt from a
ledger by :meth:`RunCounters.apply_row`, so a live run and a followed ledger (``eloledger
watch``) show through one view. Single event-loop writers need no lock; readers tolerate a
value that is one update stale.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from eloledger.ledger.row import AnyRow

# Usage the gateway reported: in its answer (server), in an agent CLI's final report of the
# session (report), or in the session log the CLI wrote (log). Only "estimated" is eloledger's.
EXACT_USAGE = frozenset({"server", "report", "log"})


@dataclass
class ArmCounters:
    name: str
    planned: int = 0  # calls planned for this arm (0 = unknown, e.g. when watching)
    done: int = 0  # calls finished (ok or error, final attempts)
    ok: int = 0
    errors: int = 0
    prompt_tokens: int = 0  # server-reported (or estimated where the server gave none)
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated_tokens: int = 0  # tokens counted while streaming, not yet replaced by usage
    usage_estimated_calls: int = 0  # finished calls whose usage is eloledger's estimate
    usage_missing_calls: int = 0  # ok calls whose usage says zero or is missing (not free)


@dataclass
class RequestLine:
    """One row of the request list (ring buffer of recent calls)."""

    task_id: str
    arm: str
    sample: int
    status: str  # running | ok | error | retry
    tokens: int = 0
    latency_ms: float | None = None
    error_class: str | None = None
    agent: str | None = None  # agent sessions: the CLI, its turns and tool calls
    turns: int | None = None
    tool_calls: int | None = None


@dataclass
class RunCounters:
    budget_tokens: int | None = None  # hard stop (max_total_tokens), if any
    concurrency: int = 0
    in_flight: int = 0
    retries: int = 0
    rate_limited: int = 0  # 429 answers seen
    errors_by_class: Counter[str] = field(default_factory=Counter)
    arms: dict[str, ArmCounters] = field(default_factory=dict)
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=4096))
    requests: deque[RequestLine] = field(default_factory=lambda: deque(maxlen=2000))
    started_at: float = field(default_factory=time.monotonic)
    finished: bool = False
    paused: bool = False
    # Totals over all arms; streaming bumps the estimated part, usage replaces it.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated_tokens: int = 0
    server_reported_calls: int = 0
    estimated_calls: int = 0
    usage_missing_calls: int = 0  # ok calls with zero or no usage (doctor --ledger's rule)
    events: int = 0  # token events seen (for tokens/s and benchmarks)
    # tokens already in the ledger when this process started (a resumed run): in the totals,
    # never in a rate (they were not spent now)
    resumed_tokens: int = 0
    first_ts: float | None = None  # earliest and latest row ``ts`` seen: a watched run's span
    last_ts: float | None = None
    # Agent sessions running now, keyed (task_id, arm, session, sample): each value is the
    # runner's live SessionState (turn, tool calls, tokens so far, elapsed); see agents.events.
    agent_sessions: dict[tuple[str, str, int, int], Any] = field(default_factory=dict)

    def arm(self, name: str) -> ArmCounters:
        found = self.arms.get(name)
        if found is None:
            found = self.arms[name] = ArmCounters(name)
        return found

    def on_tokens(self, arm: str, n: int = 1) -> None:
        """A streamed chunk arrived: count it as estimated until usage replaces it."""
        self.events += 1
        self.estimated_tokens += n
        self.arm(arm).estimated_tokens += n

    def settle_estimate(self, arm: str, n: int) -> None:
        """A call finished: drop its streamed estimate (its ledger row carries the real count)."""
        if n:
            self.estimated_tokens -= n
            self.arm(arm).estimated_tokens -= n

    def apply_row(self, row: AnyRow) -> None:
        """Fold one finished ledger row into the counters (used live and when watching)."""
        role = row.get("role") or "sample"
        if role in ("judge", "probe", "checkpoint", "call"):  # agent calls: in their session row
            return
        arm = self.arm(str(row.get("arm") or "?"))
        status = row.get("status") or "ok"
        prompt = _int(row.get("prompt_tokens"))
        completion = _int(row.get("completion_tokens"))
        total = _int(row.get("total_tokens")) or prompt + completion
        arm.prompt_tokens += prompt
        arm.completion_tokens += completion
        arm.total_tokens += total
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.total_tokens += total
        source = row.get("usage_source")
        if source in EXACT_USAGE and status == "ok" and _says_zero(row, total):
            source = "missing"  # usage the gateway did not pass on, not a free call
        if source in EXACT_USAGE:
            self.server_reported_calls += 1
        elif source == "missing":
            self.usage_missing_calls += 1
            arm.usage_missing_calls += 1
        elif source == "estimated":
            self.estimated_calls += 1
            arm.usage_estimated_calls += 1
        if status == "ok":
            arm.ok += 1
            arm.done += 1
        else:
            err = str(row.get("error_class") or "error")
            if row.get("http_status") == 429:
                self.rate_limited += 1
            if _is_final_attempt(row):
                arm.errors += 1
                arm.done += 1
                self.errors_by_class[err] += 1
            else:
                self.retries += 1
        ts = row.get("ts")
        if isinstance(ts, (int, float)) and not isinstance(ts, bool):
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        latency = row.get("latency_ms")
        if isinstance(latency, (int, float)):
            self.latencies_ms.append(float(latency))
        self.requests.append(
            RequestLine(
                task_id=str(row.get("task_id") or ""),
                arm=arm.name,
                sample=_int(row.get("sample")),
                status="ok" if status == "ok" else "error",
                tokens=total,
                latency_ms=latency if isinstance(latency, (int, float)) else None,
                error_class=row.get("error_class"),
                agent=row.get("agent"),
                turns=row.get("turns"),
                tool_calls=row.get("tool_calls"),
            )
        )

    def elapsed_s(self) -> float:
        return max(1e-9, time.monotonic() - self.started_at)


def _int(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, (int, float)):
        return int(value)
    return 0


def _is_final_attempt(row: AnyRow) -> bool:
    """An error row is final unless the runner marked it ``will_retry``."""
    return not row.get("will_retry", False)


def _says_zero(row: AnyRow, total: int) -> bool:
    """The rule ``tokens`` and ``doctor --ledger`` apply (:func:`ledger.summary.counted_usage`):
    a 0 total, or an explicit 0 prompt count, is usage the gateway did not pass on."""
    prompt = row.get("prompt_tokens")
    return total == 0 or (prompt is not None and _int(prompt) == 0)
