"""What a session-log reader yields: one model call, or a line it could not understand.

Each CLI's ``logs.py`` turns its own line shapes into these; the scanner (``logscan``) does the
rest (offsets, torn lines, dedupe) the same way for every CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from msgspec import UNSET

from eloledger.agents.usage import CallUsage
from eloledger.ledger.row import LedgerRow

# How to merge two lines that carry the same call key inside one file: Claude Code repeats a
# message once per content block (keep the largest usage), Gemini CLI writes an id twice (keep
# the last write), Codex never repeats a record within a file (keep the first).
Merge = Literal["largest", "last", "first"]
# What a parser's optional ``feed_line(raw)`` fast path returns for a line it leaves to the
# general path (orjson, then ``feed``).
FALLBACK = object()


@dataclass
class Call:
    """One model call as the log tells it, already on the canonical token mapping."""

    key: str  # dedupe key, unique across every file of one source
    usage: CallUsage
    session: str
    model: str
    project: str = ""
    ts: Any = None  # as the log wrote it (ISO text or Unix time): parsed once, in row()
    call_id: str = ""  # the provider's id of the call (message.id, response_id, ...)
    merge: Merge = "first"
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self, source: str) -> LedgerRow:
        """The ledger row of this call (``usage_source = "log"``); ``extra`` names ledger
        fields (a name that is not one is a TypeError)."""
        call_id = self.call_id or self.key
        ts = parse_ts(self.ts)
        return LedgerRow(
            source=source,
            session=self.session,
            project=self.project,
            model=self.model,
            role="sample",
            status="ok",
            usage_source="log",
            **self.usage.as_row(),
            call_id=call_id,
            dedupe_key=self.key if self.key != call_id else UNSET,
            ts=UNSET if ts is None else ts,
            **self.extra,
        )


class FileParser:
    """Base of each CLI's line parser: the file it reads and its memory between lines.

    ``state`` must stay JSON-serialisable: the importer saves it with the file's offset.
    """

    def __init__(self, path: Path, state: dict[str, Any] | None = None) -> None:
        self.path = path
        self.state: dict[str, Any] = state or {}


@dataclass(frozen=True)
class Unknown:
    """A line whose shape the reader does not know: counted and reported, never zero tokens."""

    shape: str  # short description, e.g. "assistant usage without token counts"
    usage_like: bool = True  # False: a harmless line type we merely do not read


def row_key(row: dict[str, Any]) -> str | None:
    """The dedupe key of a ledger row written by the importer."""
    key = row.get("dedupe_key") or row.get("call_id")
    return str(key) if key else None


def parse_ts(value: Any) -> float | None:
    """ISO-8601 (with ``Z``) or Unix seconds/milliseconds -> Unix seconds."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str) and value:
        try:  # Python 3.11 reads the Z itself
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def has_token_counts(usage: Any, keys: tuple[str, ...]) -> bool:
    """True when ``usage`` is a mapping with at least one integer token counter among ``keys``."""
    if not isinstance(usage, dict):
        return False
    return any(isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) for k in keys)
