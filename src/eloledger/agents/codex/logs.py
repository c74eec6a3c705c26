"""Codex rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (and ``archived_sessions``).

Shapes (docs/observed/agents.md): ``session_meta{id, cwd}``, ``turn_context{model, cwd}``,
``token_usage_record{thread_id, turn_id, response_id, usage}`` (0.171+: one line per model call,
usage for that call only) and ``event_msg/token_count{info{total_token_usage (the thread's running
total), last_token_usage (the last call)}}``. Dedupe rules:

* a file with ``token_usage_record`` lines is read from those only (its ``token_count`` lines
  count the same calls again); key = (``turn_id``, ``response_id``);
* older rollouts: ``token_count`` with ``last_token_usage``; a re-emitted ``token_count`` whose
  running total did not move is the same call again (skipped); key = (timestamp, running total);
* resumed threads and forked/subagent rollouts replay earlier lines with their original ids: the
  same keys again, dropped by the scanner's cross-file key index.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from eloledger.agents.logcall import Call, FileParser, Unknown, has_token_counts
from eloledger.agents.usage import CallUsage

SOURCE = "codex"
# Only lines holding one of these are parsed (the rest cannot carry tokens or context).
NEEDLES = (b'"token_usage_record"', b'"token_count"', b'"session_meta"', b'"turn_context"')
TOKEN_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens", "total_tokens")
QUIET_TYPES = frozenset({"response_item", "event_msg", "world_state", "compacted"})


def default_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Codex's own rule: ``CODEX_HOME`` else ``~/.codex``."""
    env = os.environ if env is None else env
    configured = env.get("CODEX_HOME", "").strip()
    if configured:
        return [Path(configured).expanduser()]
    return [Path(env.get("HOME") or Path.home()) / ".codex"]


def find_files(root: Path) -> Iterator[Path]:
    folders = [root / "sessions", root / "archived_sessions"]
    if not any(f.is_dir() for f in folders):
        folders = [root]  # pointed straight at a folder of rollouts
    for folder in folders:
        yield from sorted(folder.rglob("rollout-*.jsonl"))


class Parser(FileParser):
    """Reads one rollout; remembers the thread, model and cwd seen so far (saved with the offset)."""

    def feed(self, obj: dict[str, Any]) -> Call | Unknown | None:
        kind = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return Unknown(
                f"type={kind!r} without payload", usage_like=kind == "token_usage_record"
            )
        if kind == "session_meta":
            self.state.setdefault("session", str(payload.get("id") or payload.get("session_id")))
            self.state.setdefault("project", str(payload.get("cwd") or ""))
            return None
        if kind == "turn_context":
            if payload.get("model"):
                self.state["model"] = str(payload["model"])
            if payload.get("cwd"):
                self.state["project"] = str(payload["cwd"])
            return None
        if kind == "token_usage_record":
            return self._record(obj, payload)
        if kind == "event_msg" and payload.get("type") == "token_count":
            return self._token_count(obj, payload)
        if kind in QUIET_TYPES:
            return None
        return Unknown(f"type={kind!r}", usage_like=False)

    def _record(self, obj: dict[str, Any], payload: dict[str, Any]) -> Call | Unknown:
        usage = payload.get("usage")
        if not has_token_counts(usage, TOKEN_KEYS):
            return Unknown("token_usage_record.usage without token counts")
        self.state["records"] = True
        response_id = str(payload.get("response_id") or "")
        turn_id = str(payload.get("turn_id") or "")
        if not response_id and not turn_id:
            return Unknown("token_usage_record without response_id and turn_id")
        return self._call(obj, payload, usage, key=f"{turn_id}/{response_id}", call_id=response_id)

    def _token_count(self, obj: dict[str, Any], payload: dict[str, Any]) -> Call | Unknown | None:
        info = payload.get("info")
        if info is None or self.state.get("records"):
            return None  # no call yet (rate-limit only), or counted by token_usage_record
        if not isinstance(info, dict):
            return Unknown("token_count.info not an object")
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if not has_token_counts(total, TOKEN_KEYS):
            return Unknown("token_count without total_token_usage")
        running = [total.get(k) for k in sorted(total)]
        if running == self.state.get("running"):
            return None  # re-emitted with an unchanged total: the same call again
        if not has_token_counts(last, TOKEN_KEYS):
            previous = self.state.get("running_usage") or {}
            last = {k: int(total.get(k) or 0) - int(previous.get(k) or 0) for k in total}
        self.state["running"] = running
        self.state["running_usage"] = total
        key = f"tc/{obj.get('timestamp')}/{total.get('total_tokens')}/{total.get('input_tokens')}"
        return self._call(obj, payload, last, key=key, call_id="")

    def _call(
        self, obj: dict[str, Any], payload: dict[str, Any], usage: dict, *, key: str, call_id: str
    ) -> Call:
        session = payload.get("thread_id") or payload.get("session_id") or self.state.get("session")
        return Call(
            key=key,
            usage=CallUsage.from_codex(usage),
            session=str(session or self.path.stem),
            model=str(payload.get("model") or self.state.get("model") or ""),
            project=str(self.state.get("project") or ""),
            ts=obj.get("timestamp"),
            call_id=call_id,
            merge="first",
        )
