"""Codex headless: the ``codex exec --json`` command line and its events.

Traps (docs/observed/agents.md): ``turn.completed.usage`` is the thread's running total, so the last
one is the session's count and never a sum; ``error`` events saying "Reconnecting..." are
not failures (Codex tries a WebSocket first); ``turn.failed`` is. The provider is given with
``-c`` overrides and the key through an environment variable, so no config file is touched.
Codex exec has no turn limit: the spec refuses ``max_turns`` for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eloledger.agents.events import (
    API,
    AUTH,
    CRASH,
    Launch,
    LaunchRequest,
    SessionState,
    estimate_tokens,
    load_event,
)
from eloledger.agents.usage import CallUsage

AGENT = "codex"
BINARY = "codex"
EFFORTS = ("minimal", "low", "medium", "high", "xhigh")
KEY_ENV = "ELOLEDGER_AGENT_KEY"
_TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search")
_AUTH_TEXT = re.compile(r"401|403|unauthori[sz]ed|api key|authenticat", re.I)


def launch(req: LaunchRequest) -> Launch:
    """The canonical invocation (docs/observed/agents.md); ``req.max_turns`` must be None."""
    if req.max_turns is not None:
        raise ValueError("codex exec has no turn limit")
    base_url = req.root_url.rstrip("/")
    base_url = base_url if base_url.endswith("/v1") else base_url + "/v1"  # a root or a /v1 URL
    provider = (
        '{name="eloledger",base_url=' + json.dumps(base_url)
        + f',env_key="{KEY_ENV}",wire_api="responses"'
        + _http_headers(req.headers)
        + "}"
    )  # fmt: skip
    argv = [BINARY, "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write"]
    argv += ["-C", req.workdir]
    if req.model:
        argv += ["-m", req.model]
    argv += ["-c", "model_provider=eloledger", "-c", f"model_providers.eloledger={provider}"]
    if req.effort:
        argv += ["-c", f'model_reasoning_effort="{req.effort}"']
    argv += [*req.args, req.prompt]
    return Launch(argv=argv, env={KEY_ENV: req.api_key})


class StreamParser:
    """Folds ``codex exec --json`` lines into a :class:`SessionState`.

    Codex does not show its model calls in this stream; ``turns`` counts the steps it shows
    (each tool call and each message follows one model call), the session log has the rest.
    """

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._items: set[str] = set()
        self._completed = False

    def feed(self, line: str) -> None:
        event = load_event(line)
        if event is None:
            return
        kind = event.get("type")
        s = self.state
        if kind == "thread.started":
            s.session_id = event.get("thread_id")
        elif kind in ("item.started", "item.completed"):
            self._item(event.get("item") or {})
        elif kind == "turn.completed":
            self._completed = True
            usage = event.get("usage") or {}
            s.set_report({s.model or "?": CallUsage.from_codex(usage)})  # a running total
        elif kind == "turn.failed":
            message = _message(event.get("error"))
            s.fail(AUTH if _AUTH_TEXT.search(message) else API, f"turn.failed: {message}")

    def _item(self, item: dict[str, Any]) -> None:
        s = self.state
        item_id, kind = str(item.get("id") or ""), item.get("type")
        if kind not in (*_TOOL_ITEMS, "agent_message") or item_id in self._items:
            return
        self._items.add(item_id)
        s.turns += 1
        if kind == "agent_message":
            text = str(item.get("text") or "")
            s.result_text = text
            s.est_tokens += estimate_tokens(text)
        else:
            s.tool_calls += 1
            s.est_tokens += estimate_tokens(str(item.get("command") or item.get("changes") or ""))

    def finish(self, returncode: int, stderr: str) -> None:
        if not self._completed and self.state.error_class is None:
            self.state.fail(CRASH, f"codex exited {returncode} without turn.completed: "
                            f"{stderr[-300:]}")  # fmt: skip
        elif returncode != 0:
            self.state.fail(API, f"codex exited {returncode}: {stderr[-300:]}")


def _http_headers(headers: tuple[tuple[str, str], ...]) -> str:
    """Extra request headers inside the provider table: ``,http_headers={"k"="v"}``."""
    if not headers:
        return ""
    pairs = ",".join(f"{json.dumps(k)}={json.dumps(v)}" for k, v in headers)
    return f",http_headers={{{pairs}}}"


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error or "")
