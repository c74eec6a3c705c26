"""Claude Code session logs: ``<config>/projects/<cwd as a-b-c>/<session>.jsonl``.

Shapes (shared/facts/agents.md): ``type: assistant`` lines carry ``message.id``, ``message.model``,
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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from eloledger.agents.logcall import Call, FileParser, Unknown, has_token_counts
from eloledger.agents.usage import CallUsage

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
    yield from sorted(log_dir(root).rglob("*.jsonl"))


class Parser(FileParser):
    """Reads one session file line by line; keeps nothing between lines but the session id."""

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
