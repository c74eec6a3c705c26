"""Claude Code headless: the ``claude -p`` command line and its ``stream-json`` events.

Traps (docs/observed/agents.md): assistant events come one per content block and share
``message.id`` with a non-final usage (``output_tokens: 1``), so they are only an estimate;
the ``result`` event's ``modelUsage`` is the exact count (it includes subagents, ``usage``
does not). ``is_error`` can be true with ``subtype: success`` (a connection or auth failure),
so it is always read.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eloledger.agents.events import (
    API,
    AUTH,
    CRASH,
    MAX_TURNS,
    Launch,
    LaunchRequest,
    SessionState,
    estimate_tokens,
    load_event,
)
from eloledger.agents.usage import CallUsage

AGENT = "claude-code"
BINARY = "claude"
EFFORTS = ("low", "medium", "high", "xhigh", "max")
_AUTH_TEXT = re.compile(r"401|403|api key|authenticat|unauthori[sz]ed|x-api-key", re.I)


def launch(req: LaunchRequest) -> Launch:
    """The canonical invocation (docs/observed/agents.md); runs in the session's working directory.

    ``req.auth`` is the profile's header form: ``x-api-key`` (ANTHROPIC_API_KEY) or ``bearer``
    (ANTHROPIC_AUTH_TOKEN, an ``Authorization: Bearer`` header)."""
    argv = [BINARY, "-p", req.prompt, "--output-format", "stream-json", "--verbose"]
    if req.max_turns is not None:
        argv += ["--max-turns", str(req.max_turns)]
    if req.model:
        argv += ["--model", req.model]
    if req.effort:
        argv += ["--effort", req.effort]
    argv += ["--permission-mode", "acceptEdits", "--allowedTools", "Bash,Edit,Write,Read"]
    argv += req.args
    key_var = "ANTHROPIC_AUTH_TOKEN" if req.auth == "bearer" else "ANTHROPIC_API_KEY"
    env = {
        "ANTHROPIC_BASE_URL": req.root_url.rstrip("/"),
        key_var: req.api_key,
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    if req.headers:  # extra request headers, one "Name: value" per line
        env["ANTHROPIC_CUSTOM_HEADERS"] = "\n".join(f"{k}: {v}" for k, v in req.headers)
    return Launch(argv=argv, env=env)


class StreamParser:
    """Folds ``--output-format stream-json --verbose`` lines into a :class:`SessionState`."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._messages: set[str] = set()
        self._has_result = False

    def feed(self, line: str) -> None:
        event = load_event(line)
        if event is None:
            return
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.state.session_id = event.get("session_id")
            self.state.model = event.get("model") or self.state.model
        elif kind == "system" and event.get("subtype") == "api_retry":
            self._retry(event)
        elif kind == "assistant":
            self._assistant(event.get("message") or {})
        elif kind == "result":
            self._result(event)

    def _assistant(self, message: dict[str, Any]) -> None:
        s = self.state
        mid = str(message.get("id") or "")
        if mid not in self._messages:  # a new model call: its prompt once, blocks as they come
            self._messages.add(mid)
            s.turns += 1
            s.est_tokens += CallUsage.from_claude(message.get("usage") or {}).prompt_tokens
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                s.tool_calls += 1
                s.est_tokens += estimate_tokens(json.dumps(block.get("input") or {}))
            else:
                s.est_tokens += estimate_tokens(str(block.get("text") or ""))

    def _retry(self, event: dict[str, Any]) -> None:
        """Claude Code retries a rejected key 10 times over about 3 minutes (observed with
        2.1.197): a 401/403 will not heal, so the session is stopped at the first one."""
        if event.get("error_status") in (401, 403):
            self.state.fail(AUTH, f"{event.get('error_status')} {event.get('error')}: key rejected")
            self.state.abort = True

    def _result(self, event: dict[str, Any]) -> None:
        s = self.state
        self._has_result = True
        models = event.get("modelUsage") or {}
        if isinstance(models, dict) and models:
            s.set_report({m: CallUsage.from_claude(u) for m, u in models.items()})
        elif isinstance(event.get("usage"), dict):
            s.set_report({s.model or "?": CallUsage.from_claude(event["usage"])})
        if isinstance(event.get("num_turns"), int):
            s.turns = event["num_turns"]
        s.result_text = str(event.get("result") or "")
        if not event.get("is_error"):
            return
        subtype = str(event.get("subtype") or "")
        text = f"{subtype}: {s.result_text or event.get('api_error_status') or ''}"
        if subtype == "error_max_turns":
            s.fail(MAX_TURNS, text)
        elif event.get("api_error_status") in (401, 403) or _AUTH_TEXT.search(s.result_text):
            s.fail(AUTH, text)
        else:
            s.fail(API, text)

    def finish(self, returncode: int, stderr: str) -> None:
        """The process ended: no result event (or a failing exit) is a crash."""
        if self.state.abort:
            return
        if not self._has_result:
            self.state.fail(CRASH, f"claude exited {returncode} without a result: {stderr[-300:]}")
        elif returncode != 0:
            self.state.fail(API, f"claude exited {returncode}: {stderr[-300:]}")
