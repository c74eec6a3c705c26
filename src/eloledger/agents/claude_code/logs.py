"""Claude Code session logs: ``<config>/projects/<cwd as a-b-c>/<session>.jsonl``.

Shapes (docs/observed/agents.md): ``type: assistant`` lines carry ``message.id``, ``message.model``,
``message.usage`` (Anthropic usage: ``input_tokens`` excludes both cache counts), ``requestId``,
``timestamp``, ``isSidechain``, ``sessionId`` and ``cwd``. Dedupe rules:

* one line per content block, each repeating the message's usage: the key is
  (``message.id``, ``requestId``) and the largest usage of the key wins;
* a resumed session (``--resume``) and sidechain replays copy earlier messages into another file:
  the same key again, so the scanner's cross-file key index drops them;
* model ``<synthetic>`` marks lines Claude Code wrote itself (no API call): skipped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec
import orjson

from eloledger.agents.logcall import (
    FALLBACK,
    Call,
    FileParser,
    Unknown,
    has_token_counts,
    parse_ts,
)
from eloledger.agents.usage import CallUsage
from eloledger.ledger.row import SCHEMA_VERSION

SOURCE = "claude-code"
SYNTHETIC_MODEL = "<synthetic>"
# Only lines holding one of these are parsed: a line without a usage object cannot carry tokens.
NEEDLES = (b'"usage"',)
TOKEN_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
# Line types that never carry usage (seen in Claude Code 2.1 logs).
QUIET_TYPES = frozenset(
    {
        "user",
        "system",
        "summary",
        "queue-operation",
        "last-prompt",
        "attachment",
        "file-history-snapshot",
        "progress",
        "custom-title",
        "ai-title",
        "tag",
    }
)


# -- the usual assistant line, decoded by msgspec (typed: anything else takes the general path) --
# (gc=False: these hold only text, numbers and each other, never a cycle; the collector need
# not track the 46k of them a large import decodes)

Count = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class _Usage(msgspec.Struct, gc=False):
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cache_read_input_tokens: Count | None = None
    cache_creation_input_tokens: Count | None = None
    inputTokens: Count | None = None  # noqa: N815 - the log's own names
    outputTokens: Count | None = None  # noqa: N815
    cacheReadInputTokens: Count | None = None  # noqa: N815
    cacheCreationInputTokens: Count | None = None  # noqa: N815


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct, gc=False):
    type: str | None = None
    message: _Message | None = None
    requestId: str | None = None  # noqa: N815
    timestamp: str | None = None
    isSidechain: bool | None = None  # noqa: N815
    sessionId: str | None = None  # noqa: N815
    cwd: str | None = None


_decode_line = msgspec.json.Decoder(_Line).decode


def _counts(usage: _Usage) -> tuple[int, int, int, int]:
    """Fresh input, cache read, cache write, output: ``CallUsage.from_claude``'s counters.

    Each the first present of its snake_case and camelCase spelling (``usage._int``), else 0;
    spelled inline: this runs for every line that carries usage.
    """
    fresh, read = usage.input_tokens, usage.cache_read_input_tokens
    write, out = usage.cache_creation_input_tokens, usage.output_tokens
    return (
        fresh if fresh is not None else usage.inputTokens or 0,
        read if read is not None else usage.cacheReadInputTokens or 0,
        write if write is not None else usage.cacheCreationInputTokens or 0,
        out if out is not None else usage.outputTokens or 0,
    )


def default_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Claude Code's own rule: ``CLAUDE_CONFIG_DIR`` (comma-separated) else ``~/.claude``."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        return [Path(p.strip()).expanduser() for p in configured.split(",") if p.strip()]
    home = Path(env.get("HOME") or Path.home())
    return [home / ".claude"]


def log_dir(root: Path) -> Path:
    """A config dir holds its logs under ``projects/``; a projects dir is taken as is."""
    return root / "projects" if (root / "projects").is_dir() else root


def find_files(root: Path) -> Iterator[Path]:
    yield from sorted(walk_files(root))


def walk_files(root: Path) -> Iterator[Path]:
    """:func:`find_files` in folder order: the importer sorts them by age itself (sorting
    8,000 paths by name first cost a twentieth of an import)."""
    return log_dir(root).rglob("*.jsonl")


class Parser(FileParser):
    """Reads one session file line by line; keeps nothing between lines but the session id."""

    def feed_line(self, raw: bytes) -> Call | Unknown | None | object:
        """:meth:`feed` for an assistant line of the usual shape, decoded in one typed pass.

        Returns ``FALLBACK`` for any other line (another type, a field of another type, not
        JSON): the scanner then parses it with orjson and :meth:`feed`, which has every rule.
        """
        out = self.peek(raw)
        return self.call(out[3]) if type(out) is tuple else out

    def peek(self, raw: bytes) -> tuple[str, int, str, _Line] | Unknown | None | object:
        """:meth:`feed_line` without building the :class:`Call`: (key, total, merge, line).

        The scanner folds the repeated lines of one call first and builds a call
        (:meth:`call`) only for the line that wins, one in two or three of them.
        """
        try:
            line = _decode_line(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return FALLBACK
        if line.type != "assistant":
            return FALLBACK
        message = line.message
        if message is None:
            return Unknown("assistant without message")
        if message.model == SYNTHETIC_MODEL:
            return None
        usage = message.usage
        if usage is None or (
            usage.input_tokens is None
            and usage.output_tokens is None
            and usage.cache_read_input_tokens is None
            and usage.cache_creation_input_tokens is None
        ):
            return Unknown("assistant message.usage without token counts")
        msg_id, request_id = message.id, line.requestId
        if not msg_id and not request_id:
            return Unknown("assistant without message.id and requestId")
        return f"{msg_id or ''}/{request_id or ''}", sum(_counts(usage)), "largest", line

    def call(self, line: _Line) -> Call:
        """The call of a line :meth:`peek` accepted."""
        message = line.message
        msg_id, request_id = message.id, line.requestId  # type: ignore[union-attr]
        fresh, read, write, out = _counts(message.usage)  # type: ignore[union-attr, arg-type]
        return Call(
            key=f"{msg_id or ''}/{request_id or ''}",
            usage=CallUsage(
                prompt_tokens=fresh + read + write,
                completion_tokens=out,
                cached_tokens=read,
                cache_write_tokens=write,
            ),
            session=line.sessionId or self.path.stem,
            model=message.model or "",  # type: ignore[union-attr]
            project=line.cwd or "",
            ts=line.timestamp,
            call_id=msg_id or request_id or "",
            merge="largest",
            extra={"sidechain": True} if line.isSidechain else {},
        )

    def encode(self, line: _Line) -> bytes:
        """``encode_row(self.call(line).row(SOURCE))``, spelled out: the import's hot path.

        (Building the Call and its row cost three times this, and a LedgerRow alone, 70
        fields to fill, and its encoding about twice; the tests compare the bytes of both on
        every shape :meth:`peek` accepts, so the keys are in LedgerRow's order. No field of
        these rows is one the writer scrubs.)
        """
        message = line.message
        msg_id, request_id = message.id, line.requestId  # type: ignore[union-attr]
        fresh, read, write, out = _counts(message.usage)  # type: ignore[union-attr, arg-type]
        key = f"{msg_id or ''}/{request_id or ''}"
        call_id = msg_id or request_id or key
        ts = parse_ts(line.timestamp)
        row: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "session": line.sessionId or self.path.stem,
            "role": "sample",
            "model": message.model or "",  # type: ignore[union-attr]
            "prompt_tokens": fresh + read + write,
            "completion_tokens": out,
            "total_tokens": fresh + read + write + out,
            "reasoning_tokens": 0,
            "cached_tokens": read,
            "usage_source": "log",
            "status": "ok",
            "ts": time.time() if ts is None else ts,  # encode_row's default
            "source": SOURCE,
            "project": line.cwd or "",
            "call_id": call_id,
            "cache_write_tokens": write,
        }
        if key != call_id:
            row["dedupe_key"] = key
        if line.isSidechain:
            row["sidechain"] = True
        return orjson.dumps(row) + b"\n"

    def feed(self, obj: dict[str, Any]) -> Call | Unknown | None:
        kind = obj.get("type")
        if kind != "assistant":
            message = obj.get("message")
            if isinstance(message, dict) and "usage" in message:
                return Unknown(f"type={kind!r} with message.usage")
            if kind in QUIET_TYPES:
                return None
            return Unknown(f"type={kind!r}", usage_like=False)
        message = obj.get("message")
        if not isinstance(message, dict):
            return Unknown("assistant without message")
        model = str(message.get("model") or "")
        if model == SYNTHETIC_MODEL:
            return None
        usage = message.get("usage")
        if not has_token_counts(usage, TOKEN_KEYS):
            return Unknown("assistant message.usage without token counts")
        msg_id = message.get("id")
        request_id = obj.get("requestId")
        if not msg_id and not request_id:
            return Unknown("assistant without message.id and requestId")
        session = str(obj.get("sessionId") or self.path.stem)
        extra = {"sidechain": True} if obj.get("isSidechain") else {}
        return Call(
            key=f"{msg_id or ''}/{request_id or ''}",
            usage=CallUsage.from_claude(usage),
            session=session,
            model=model,
            project=str(obj.get("cwd") or ""),
            ts=obj.get("timestamp"),
            call_id=str(msg_id or request_id),
            merge="largest",
            extra=extra,
        )
