"""Gemini CLI chat logs: ``~/.gemini/tmp/<project>/chats/session-*.jsonl``.

Shapes (docs/observed/agents.md): a header line ``{sessionId, projectHash, startTime}``, message
lines ``{id, type: user|gemini|info|..., tokens?, model?}`` and ``{"$set": {...}}`` updates
(whose ``messages`` list, when present, restates messages). ``tokens.input`` is the whole prompt,
cache reads included; ``output`` excludes ``thoughts``. Dedupe rules: every message ``id`` is
written twice (the second write adds tool calls): same key, the last write wins; a ``$set`` that
restates messages and a resumed session repeat ids already counted.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from eloledger.agents.logcall import Call, FileParser, Unknown, has_token_counts
from eloledger.agents.usage import CallUsage
from eloledger.fsutil import open_regular

SOURCE = "gemini-cli"
# Only lines holding one of these are parsed (the rest cannot carry tokens or context).
NEEDLES = (b'"tokens"', b'"sessionId"', b'"$set"')
TOKEN_KEYS = ("input", "prompt", "output", "candidates", "total")
QUIET_TYPES = frozenset({"user", "info", "error", "warning"})


def default_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Gemini CLI keeps everything under ``~/.gemini`` (``GEMINI_CLI_HOME`` moves the home)."""
    env = os.environ if env is None else env
    home = env.get("GEMINI_CLI_HOME", "").strip() or env.get("HOME") or str(Path.home())
    return [Path(home).expanduser() / ".gemini"]


def find_files(root: Path) -> Iterator[Path]:
    base = root / "tmp" if (root / "tmp").is_dir() else root
    yield from sorted(base.glob("**/chats/session-*.jsonl"))


def project_of(path: Path) -> str:
    """The project folder Gemini CLI named (``tmp/<project>/chats/...``); its ``.project_root``
    file, when present, holds the real working directory."""
    folder = path.parent.parent
    fh = open_regular(folder / ".project_root")  # a FIFO there must not block the scan
    text = ""
    if fh is not None:
        with fh, contextlib.suppress(OSError):
            text = fh.read(4096).decode("utf-8", "replace").strip()
    return text or folder.name


class Parser(FileParser):
    """Reads one chat file; the header line gives the session id."""

    def __init__(self, path: Path, state: dict[str, Any] | None = None) -> None:
        super().__init__(path, state)
        self.state.setdefault("project", project_of(path))

    def feed(self, obj: dict[str, Any]) -> list[Call | Unknown] | Call | Unknown | None:
        if "$set" in obj:
            update = obj["$set"]
            messages = update.get("messages") if isinstance(update, dict) else None
            if isinstance(messages, list):
                return [self._message(m) for m in messages if isinstance(m, dict)]
            return None
        if "sessionId" in obj and "type" not in obj:
            self.state["session"] = str(obj["sessionId"])
            return None
        return self._message(obj)

    def _message(self, obj: dict[str, Any]) -> Call | Unknown | None:
        kind = obj.get("type")
        if kind != "gemini":
            if "tokens" in obj:
                return Unknown(f"type={kind!r} with tokens")
            if kind in QUIET_TYPES:
                return None
            return Unknown(f"type={kind!r}", usage_like=False)
        tokens = obj.get("tokens")
        if tokens is None:
            return None  # a reply still streaming: its second write carries the tokens
        if not has_token_counts(tokens, TOKEN_KEYS):
            return Unknown("gemini message.tokens without token counts")
        if not obj.get("id"):
            return Unknown("gemini message without id")
        return Call(
            key=str(obj["id"]),
            usage=CallUsage.from_gemini(tokens),
            session=str(self.state.get("session") or self.path.stem),
            model=str(obj.get("model") or ""),
            project=str(self.state.get("project") or ""),
            ts=obj.get("timestamp"),
            call_id=str(obj["id"]),
            merge="last",
        )
