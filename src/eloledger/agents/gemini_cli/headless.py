"""Gemini CLI headless: the ``gemini -p`` command line and its ``stream-json`` events.

Traps (docs/observed/agents.md): without ``security.auth.selectedType`` in settings it exits 41, in
an untrusted folder 55 (``--skip-trust``). The stream's ``result.stats.models`` gives, per
model, ``input_tokens`` (the whole prompt, cache included), ``output_tokens`` (candidates,
without thoughts) and ``total_tokens``; thoughts are the remainder.
"""

from __future__ import annotations

import json
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

AGENT = "gemini-cli"
BINARY = "gemini"
EFFORTS: tuple[str, ...] = ()  # no reasoning-effort setting
# Exit codes (docs/observed/agents.md, read in its source).
EXIT_CLASSES = {41: AUTH, 42: API, 44: API, 52: API, 53: MAX_TURNS, 54: API, 55: API}


def launch(req: LaunchRequest) -> Launch:
    """The canonical invocation (docs/observed/agents.md); auth and turn limit in the isolated HOME."""
    if req.effort:
        raise ValueError("gemini-cli has no effort setting")
    settings: dict[str, Any] = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    if req.max_turns is not None:
        settings["model"] = {"maxSessionTurns": req.max_turns}
    argv = [BINARY, "-p", req.prompt, "-o", "stream-json", "--skip-trust", "--yolo"]
    if req.model:
        argv += ["-m", req.model]
    argv += req.args
    env = {"GEMINI_API_KEY": req.api_key, "GOOGLE_GEMINI_BASE_URL": req.root_url.rstrip("/")}
    if req.headers:
        env["GEMINI_CLI_CUSTOM_HEADERS"] = ",".join(f"{k}: {v}" for k, v in req.headers)
    return Launch(argv=argv, env=env, home_files={".gemini/settings.json": json.dumps(settings)})


class StreamParser:
    """Folds ``-o stream-json`` lines into a :class:`SessionState`."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._has_result = False
        self._in_reply = False  # inside one model reply (a new one starts after a tool result)

    def feed(self, line: str) -> None:
        event = load_event(line)
        if event is None:
            return
        kind = event.get("type")
        s = self.state
        if kind == "init":
            s.session_id = event.get("session_id")
            s.model = event.get("model") or s.model
        elif kind == "message" and event.get("role") == "assistant":
            self._reply()
            text = str(event.get("content") or "")
            s.result_text += text
            s.est_tokens += estimate_tokens(text)
        elif kind == "tool_use":
            self._reply()
            s.tool_calls += 1
            s.est_tokens += estimate_tokens(json.dumps(event.get("parameters") or {}))
        elif kind == "tool_result":
            self._in_reply = False
        elif kind == "result":
            self._result(event)

    def _reply(self) -> None:
        if not self._in_reply:
            self._in_reply = True
            self.state.turns += 1

    def _result(self, event: dict[str, Any]) -> None:
        self._has_result = True
        stats = event.get("stats") or {}
        models = stats.get("models") if isinstance(stats, dict) else None
        if isinstance(models, dict) and models:
            self.state.set_report({m: _usage(u) for m, u in models.items() if isinstance(u, dict)})
        elif isinstance(stats, dict) and stats:
            self.state.set_report({self.state.model or "?": _usage(stats)})
        if event.get("status") not in (None, "success"):
            error = event.get("error") or event.get("status")
            self.state.fail(API, f"result {event.get('status')}: {error}")

    def finish(self, returncode: int, stderr: str) -> None:
        if returncode in EXIT_CLASSES:
            self.state.fail(EXIT_CLASSES[returncode], f"gemini exited {returncode}: "
                            f"{stderr[-300:]}")  # fmt: skip
        elif not self._has_result:
            self.state.fail(CRASH, f"gemini exited {returncode} without a result: {stderr[-300:]}")
        elif returncode != 0:
            self.state.fail(API, f"gemini exited {returncode}: {stderr[-300:]}")


def _usage(stats: dict[str, Any]) -> CallUsage:
    """stream-json stats: thoughts = total - input - output (they are in the total only)."""
    if "tokens" in stats and isinstance(stats["tokens"], dict):  # -o json shape
        return CallUsage.from_gemini(stats["tokens"])
    prompt = int(stats.get("input_tokens") or 0)
    output = int(stats.get("output_tokens") or 0)
    total = int(stats.get("total_tokens") or prompt + output)
    thoughts = max(0, total - prompt - output)
    return CallUsage(
        prompt_tokens=prompt,
        completion_tokens=output + thoughts,
        cached_tokens=int(stats.get("cached") or 0),
        reasoning_tokens=thoughts,
    )
