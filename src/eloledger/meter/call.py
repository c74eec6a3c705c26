"""One model call as the meter saw it, and the ledger row it becomes.

The row is the meter's, not the agent's: tokens from the gateway's own answer, latency on the
meter's clock, the model asked for (request) and the model that answered (``model_answered``:
:func:`eloledger.gateway.wire.answered_model`, the chat rows' rule: LiteLLM's header, else the body).
A call whose answer carried no usage, or only zeros, is never a 0-token success: its row is
``usage_source = "estimated"`` (from the bytes sent and received) with ``usage_note``.
"""

from __future__ import annotations

from dataclasses import dataclass

from msgspec import UNSET

from eloledger.agents.usage import CallUsage
from eloledger.ledger.row import LedgerRow

ROLE = "call"  # an agent session's model call: its tokens are in the session row's sum


@dataclass
class MeteredCall:
    index: int  # 1, 2, ... within the session, in the order the calls ended
    wire: str
    path: str
    model_asked: str | None
    model_answered: str | None
    http_status: int
    streamed: bool
    usage: CallUsage | None  # None: the gateway gave no usable count (see ``usage_note``)
    usage_note: str | None  # no_usage | zero_usage
    estimate: CallUsage  # bytes / 4 each way: what an unmetered call is booked at
    latency_ms: float
    ttft_ms: float | None
    error: str | None  # the gateway's error (HTTP status >= 400 or an error inside a stream)
    request_id: str | None
    ts: float

    @property
    def ok(self) -> bool:
        return self.http_status < 400 and self.error is None

    @property
    def counted(self) -> CallUsage:
        """The tokens this call is booked at: the gateway's count, else the estimate (a failed
        call without a count cost nothing known)."""
        if self.usage is not None:
            return self.usage
        return self.estimate if self.ok else CallUsage()

    def row(self) -> LedgerRow:
        """The ledger fields of this call (the session's identity fields are added by the
        runner)."""
        ok = self.ok
        return LedgerRow(
            role=ROLE,
            round=self.index,
            wire_api=self.wire,
            model=self.model_asked,
            model_answered=self.model_answered,
            **self.counted.as_row(),
            usage_source="server" if self.usage is not None else "estimated",
            latency_ms=round(self.latency_ms, 1),
            ttft_ms=None if self.ttft_ms is None else round(self.ttft_ms, 1),
            http_status=self.http_status,
            status="ok" if ok else "error",
            request_id=self.request_id,
            ts=self.ts,
            usage_note=self.usage_note or UNSET,
            error_class=UNSET if ok else "api",
            error=UNSET if ok else self.error or f"HTTP {self.http_status}",
        )


def session_usage(calls: list[MeteredCall]) -> tuple[CallUsage, str]:
    """The session's tokens (the sum of its calls) and where they came from: ``server`` when
    every call that was answered carried a count, ``estimated`` when one did not."""
    total = CallUsage()
    source = "server"
    for call in calls:
        total = total + call.counted
        if call.usage is None and call.ok:
            source = "estimated"
    return total, source
