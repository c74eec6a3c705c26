"""A strict local gateway for the REAL agent CLIs (Claude Code, Codex, Gemini CLI): not the simulator.

It speaks exactly what the CLIs send and nothing more: Anthropic ``POST /v1/messages`` (streamed,
with ``tool_use``), the Responses API ``POST /v1/responses`` (streamed, with ``function_call``;
Codex's WebSocket upgrade on ``GET /v1/responses`` gets an immediate plain 404 so it falls back
to HTTPS), and Gemini ``:streamGenerateContent`` / ``:generateContent`` (with ``functionCall``).
A wrong or missing key is a 401 in each client's own error format.

Every model request it answers is billed: ``gateway.billed`` holds, in order, the client wire,
the model, the usage object exactly as sent on the wire, and the canonical ``CallUsage`` the
gateway meant (computed from its own plan, not from the wire object, so tests of the token
mapping have an independent truth). The usage varies per request (fresh input, cache reads and
writes, output, reasoning) so a wrong sum or a double count shows.

Replies are scripted by conversation state, not by request order: a request that already holds
``k`` tool results gets ``script[k]`` (the last entry once past the end). A ``Reply`` with a
``shell`` command becomes a call to whichever shell tool the request offers (Claude ``Bash``,
Codex ``shell``/``exec_command``/``shell_command``, Gemini ``run_shell_command``); a request
offering no shell tool (title or routing side calls) gets the reply's text.

Real CLIs must run offline: ``run_agent`` starts the gateway and the CLI together inside one
``unshare -n`` network namespace (this file is the driver) and returns the CLI's output and the
billed list. ``{root}`` in the argv and environment values becomes the gateway root URL.

Used by helpers E and F1 via ``git checkout f2-sim -- tests/agent_gateway.py``: edit on f2-sim only.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from eloledger import clients_dir
from eloledger.agents.usage import CallUsage

GOOD_KEY = "sk-agentgw-0123456789abcdef"
BINARY = {"claude-code": "claude", "codex": "codex", "gemini-cli": "gemini"}
# Where the CLIs are, by the rules the install script and the runner use (clients_dir), found at
# import time: the temp-HOME fixture moves HOME and drops XDG_CACHE_HOME before each test.
CLI_PATHS = {binary: clients_dir.find(binary) for binary in BINARY.values()}
_FIRST = next((p for p in CLI_PATHS.values() if p is not None), None)
CLIENTS_DIR = _FIRST.parent if _FIRST is not None else clients_dir.bin_dirs()[0]
# The npm prefix to hand a runner subprocess as ELOLEDGER_CLIENTS_DIR (its HOME is elsewhere).
CLIENTS_PREFIX = CLIENTS_DIR.parent.parent if CLIENTS_DIR.name == ".bin" else CLIENTS_DIR
LOOKED_IN = ", ".join(str(d) for d in clients_dir.bin_dirs())
# Set to 1 (as .ci/run does where npm is present): a real-CLI test that cannot run fails.
REQUIRE_ENV = "ELOLEDGER_REQUIRE_CLIENTS"
SHELL_TOOLS = ("Bash", "shell", "exec_command", "shell_command", "run_shell_command")


@dataclass(frozen=True)
class Tokens:
    """What the gateway bills one request; each wire reports the parts it has a field for."""

    fresh: int = 0  # input that is neither read from nor written to the cache
    cache_read: int = 0
    cache_write: int = 0  # Anthropic and Responses only (Gemini has no field for it)
    output: int = 0  # visible output
    reasoning: int = 0  # Responses and Gemini only (Anthropic folds thinking into output)


def planned_tokens(index: int) -> Tokens:
    """The default plan: different numbers for every request, cache reads after the first."""
    return Tokens(
        fresh=40 + 7 * index,
        cache_read=0 if index == 0 else 1000 + 100 * index,
        cache_write=300 if index == 0 else 20 + 3 * index,
        output=25 + 5 * index,
        reasoning=6 + index,
    )


@dataclass(frozen=True)
class Reply:
    """One scripted model turn: run ``shell`` with the offered shell tool, else answer ``text``."""

    shell: str | None = None
    text: str = "Done."


DEFAULT_SCRIPT = (Reply(shell="echo hello", text="I will run it."), Reply(text="Done: hello"))


@dataclass
class AgentGatewayConfig:
    keys: tuple[str, ...] = (GOOD_KEY,)
    script: tuple[Reply, ...] = DEFAULT_SCRIPT
    plan: tuple[Tokens, ...] = ()  # explicit per-request usage (cycled); empty: planned_tokens
    models: tuple[str, ...] = ()  # empty: any model
    # Answer to Codex's WebSocket upgrade. 404 (what plain gateways say) costs Codex ~6 s of
    # retries before it falls back to HTTPS; 426 Upgrade Required makes it fall back at once.
    ws_status: int = 404

    def to_json(self) -> dict[str, Any]:
        return {
            "keys": list(self.keys),
            "script": [asdict(r) for r in self.script],
            "plan": [asdict(t) for t in self.plan],
            "models": list(self.models),
            "ws_status": self.ws_status,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentGatewayConfig:
        return cls(
            keys=tuple(data["keys"]),
            script=tuple(Reply(**r) for r in data["script"]),
            plan=tuple(Tokens(**t) for t in data["plan"]),
            models=tuple(data["models"]),
            ws_status=data["ws_status"],
        )


@dataclass
class Billed:
    """One model request the gateway answered and charged for."""

    wire: str  # "anthropic" | "responses" | "gemini"
    model: str
    stream: bool
    usage: dict[str, Any]  # the usage object exactly as sent
    canonical: CallUsage  # what the gateway billed, on the ledger's mapping
    tool_results: list[str]  # the tool outputs this request carried back
    reply: str  # "tool" or "text"
    tools: list[str] = field(default_factory=list)  # names of the tools the request offered


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0


@dataclass
class AgentGateway:
    config: AgentGatewayConfig = field(default_factory=AgentGatewayConfig)
    billed: list[Billed] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def root(self) -> str:
        """No /v1: what Claude Code and Gemini CLI take; Codex takes root + "/v1"."""
        return f"http://127.0.0.1:{self.port}"

    def next_tokens(self) -> tuple[int, Tokens]:
        index = len(self.billed)
        plan = self.config.plan
        return index, plan[index % len(plan)] if plan else planned_tokens(index)

    def total(self, wire: str | None = None) -> CallUsage:
        """Everything billed (to one wire if given)."""
        out = CallUsage()
        for entry in self.billed:
            if wire is None or entry.wire == wire:
                out = out + entry.canonical
        return out


@contextmanager
def serve(config: AgentGatewayConfig | None = None) -> Iterator[AgentGateway]:
    """Run the gateway on 127.0.0.1 (random port) for the duration of the block."""
    gateway = AgentGateway(config or AgentGatewayConfig())
    handler = type("Handler", (_Handler,), {"gateway": gateway})
    server = _QuietServer(("127.0.0.1", 0), handler)
    gateway.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield gateway
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


# --- wire usage ---------------------------------------------------------------------------------
def wire_usage(wire: str, t: Tokens) -> tuple[dict[str, Any], CallUsage]:
    """The usage object a wire sends for ``t``, and the canonical usage that object means."""
    if wire == "anthropic":
        sent = {
            "input_tokens": t.fresh,
            "cache_creation_input_tokens": t.cache_write,
            "cache_read_input_tokens": t.cache_read,
            "output_tokens": t.output,
        }
        return sent, CallUsage(
            prompt_tokens=t.fresh + t.cache_read + t.cache_write,
            completion_tokens=t.output,
            cached_tokens=t.cache_read,
            cache_write_tokens=t.cache_write,
        )
    if wire == "responses":
        prompt, completion = t.fresh + t.cache_read + t.cache_write, t.output + t.reasoning
        sent = {
            "input_tokens": prompt,
            "input_tokens_details": {
                "cached_tokens": t.cache_read,
                "cache_write_tokens": t.cache_write,
            },
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": t.reasoning},
            "total_tokens": prompt + completion,
        }
        return sent, CallUsage(prompt, completion, t.cache_read, t.cache_write, t.reasoning)
    prompt = t.fresh + t.cache_read
    sent = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": t.output,
        "cachedContentTokenCount": t.cache_read,
        "thoughtsTokenCount": t.reasoning,
        "totalTokenCount": prompt + t.output + t.reasoning,
    }
    return sent, CallUsage(prompt, t.output + t.reasoning, t.cache_read, 0, t.reasoning)


# --- reading requests ---------------------------------------------------------------------------
def _text_of(value: Any) -> str:
    """Tool output in any of the wires' shapes (string, list of text blocks, dict) as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text_of(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "result"):
            if key in value:
                return _text_of(value[key])
        return json.dumps(value)
    return ""


def tool_results(wire: str, body: dict[str, Any]) -> list[str]:
    """The tool outputs a request carries back to the model, oldest first."""
    found: list[str] = []
    if wire == "anthropic":
        for message in body.get("messages") or []:
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list):
                found += [
                    _text_of(b.get("content")) for b in content if b.get("type") == "tool_result"
                ]
    elif wire == "responses":
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                found.append(_text_of(item.get("output")))
    else:
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if "functionResponse" in part:
                    found.append(_text_of(part["functionResponse"].get("response")))
    return found


def offered_tools(wire: str, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> its parameter schema, for the tools a request offers."""
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if wire == "anthropic":
            tools[tool.get("name", "")] = tool.get("input_schema") or {}
        elif wire == "responses":
            if tool.get("type") == "function":
                tools[tool.get("name", "")] = tool.get("parameters") or {}
        else:
            for decl in tool.get("functionDeclarations") or []:
                schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
                tools[decl.get("name", "")] = schema
    return tools


def shell_call(tools: dict[str, dict[str, Any]], command: str) -> tuple[str, dict] | None:
    """(tool name, arguments) running ``command`` with the offered shell tool, if any."""
    for name in SHELL_TOOLS:
        if name not in tools:
            continue
        props = tools[name].get("properties") or {}
        if "cmd" in props:
            return name, {"cmd": command}
        if (props.get("command") or {}).get("type") == "array":
            return name, {"command": ["bash", "-lc", command]}
        return name, {"command": command, "description": "run a shell command"}
    return None


# --- the handler --------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    gateway: AgentGateway
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def do_HEAD(self) -> None:  # noqa: N802 - Claude Code's warm-up; it ignores the 404
        self._record()
        self._send_json(404, {"error": {"message": "Not Found"}})

    def do_GET(self) -> None:  # noqa: N802
        self._record()
        path = urlsplit(self.path).path
        if path == "/v1/responses":  # Codex's WebSocket upgrade: refuse fast
            # HTTP/1.1 status line: Codex's WebSocket client rejects a 1.0 answer as a protocol
            # error instead of reading the 404.
            self.protocol_version = "HTTP/1.1"
            self.close_connection = True
            status = self.gateway.config.ws_status
            body = {"error": {"message": "no websocket here", "type": "not_found"}}
            self._send_json(status, body, {"Connection": "close"})
        elif path in ("/v1/models", "/v1beta/models") and self._auth_ok(self._wire_of(path)):
            self._send_json(200, {"object": "list", "data": [], "models": []})
        elif path in ("/v1/models", "/v1beta/models"):
            self._unauthorised(self._wire_of(path))
        else:
            self._send_json(404, {"error": {"message": f"Invalid URL (GET {path})"}})

    def do_POST(self) -> None:  # noqa: N802
        self._record()
        parts = urlsplit(self.path)
        body = self._read_body()
        route = self._route(parts.path)
        if route is None:
            self._send_json(404, {"error": {"message": f"Invalid URL (POST {parts.path})"}})
            return
        wire, verb, model = route
        if not self._auth_ok(wire, parse_qs(parts.query)):
            self._unauthorised(wire)
            return
        if verb == "count":
            count = len(json.dumps(body)) // 4
            self._send_json(200, {"input_tokens": count, "totalTokens": count})
            return
        model = model or str(body.get("model") or "")
        allowed = self.gateway.config.models
        if allowed and model not in allowed:
            self._error(wire, 404, f"The model `{model}` does not exist")
            return
        stream = verb == "stream" or bool(body.get("stream"))
        self._answer(wire, model, body, stream)

    # --- routing and auth -----------------------------------------------------------------------
    def _route(self, path: str) -> tuple[str, str, str | None] | None:
        if path == "/v1/messages":
            return ("anthropic", "generate", None)
        if path == "/v1/messages/count_tokens":
            return ("anthropic", "count", None)
        if path == "/v1/responses":
            return ("responses", "generate", None)
        if path.startswith("/v1beta/models/") and ":" in path:
            model, _, verb = path[len("/v1beta/models/") :].partition(":")
            kinds = {"generateContent": "generate", "streamGenerateContent": "stream"}
            kinds["countTokens"] = "count"
            if verb in kinds:
                return ("gemini", kinds[verb], model)
        return None

    def _wire_of(self, path: str) -> str:
        if path.startswith("/v1beta"):
            return "gemini"
        return "anthropic" if "anthropic-version" in self.headers else "responses"

    def _auth_ok(self, wire: str, query: dict[str, list[str]] | None = None) -> bool:
        presented = {
            self.headers.get("Authorization", "").removeprefix("Bearer "),
            self.headers.get("x-api-key", ""),
        }
        if wire == "gemini":
            presented |= {self.headers.get("x-goog-api-key", ""), *(query or {}).get("key", [])}
        if wire == "responses":
            presented.discard(self.headers.get("x-api-key", ""))
        return bool(presented & set(self.gateway.config.keys))

    def _unauthorised(self, wire: str) -> None:
        self._error(wire, 401, "invalid api key (the key was not accepted by this gateway)")

    def _error(self, wire: str, status: int, message: str) -> None:
        if wire == "anthropic":
            kind = {401: "authentication_error", 404: "not_found_error"}.get(status, "api_error")
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        elif wire == "gemini":
            name = {401: "UNAUTHENTICATED", 404: "NOT_FOUND"}.get(status, "INTERNAL")
            payload = {"error": {"code": status, "message": message, "status": name}}
        else:
            code = {401: "invalid_api_key", 404: "model_not_found"}.get(status, "server_error")
            payload = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": code,
                }
            }
        self._send_json(status, payload)

    # --- answering ------------------------------------------------------------------------------
    def _answer(self, wire: str, model: str, body: dict[str, Any], stream: bool) -> None:
        results = tool_results(wire, body)
        script = self.gateway.config.script
        reply = script[min(len(results), len(script) - 1)]
        tools = offered_tools(wire, body)
        call = shell_call(tools, reply.shell) if reply.shell else None
        if wire == "gemini" and _wants_json(body):  # Gemini CLI's routing/next-speaker checks
            call, reply = None, Reply(text=json.dumps(_json_answer(body)))
        with self.gateway.lock:
            index, tokens = self.gateway.next_tokens()
            sent, canonical = wire_usage(wire, tokens)
            self.gateway.billed.append(
                Billed(
                    wire,
                    model,
                    stream,
                    sent,
                    canonical,
                    results,
                    "tool" if call else "text",
                    sorted(tools),
                )
            )
        call_id = f"call_{index}"
        if wire == "anthropic":
            self._anthropic(model, reply.text, call, call_id, sent, stream)
        elif wire == "responses":
            self._responses(model, reply.text, call, call_id, sent, stream)
        else:
            self._gemini(model, reply.text, call, sent, stream)

    def _anthropic(
        self, model: str, text: str, call: tuple | None, call_id: str, usage: dict, stream: bool
    ) -> None:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if call:
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{call_id}", "name": call[0], "input": call[1]}
            )
        stop = "tool_use" if call else "end_turn"
        message = {
            "id": f"msg_{call_id}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not stream:
            self._send_json(200, message)
            return
        start_usage = {**usage, "output_tokens": 1}
        events: list[tuple[str | None, Any]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        **message,
                        "content": [],
                        "stop_reason": None,
                        "usage": start_usage,
                    },
                },
            ),
        ]
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                empty, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": text}
            else:
                empty = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": empty},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        final = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": usage,
        }
        events += [("message_delta", final), ("message_stop", {"type": "message_stop"})]
        self._send_sse(events)

    def _responses(
        self, model: str, text: str, call: tuple | None, call_id: str, usage: dict, stream: bool
    ) -> None:
        if call:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": call[0],
                "arguments": json.dumps(call[1]),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{call_id}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        response = {
            "id": f"resp_{call_id}",
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": "completed",
            "output": [item],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage,
        }
        if not stream:
            self._send_json(200, response)
            return
        pending = {**response, "status": "in_progress", "output": [], "usage": None}
        opened = {**item, "status": "in_progress"}
        if call:
            opened["arguments"] = ""
            middle = [
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "delta": item["arguments"],
                },
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": 0,
                    "arguments": item["arguments"],
                },
            ]
        else:
            opened["content"] = []
            where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
            middle = [
                {
                    "type": "response.content_part.added",
                    **where,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                },
                {"type": "response.output_text.delta", **where, "delta": text, "logprobs": []},
                {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
                {"type": "response.content_part.done", **where, "part": item["content"][0]},
            ]
        events = [
            {"type": "response.created", "response": pending},
            {"type": "response.in_progress", "response": pending},
            {"type": "response.output_item.added", "output_index": 0, "item": opened},
            *middle,
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response},
        ]
        for number, event in enumerate(events):
            event["sequence_number"] = number
        self._send_sse([(e["type"], e) for e in events])

    def _gemini(self, model: str, text: str, call: tuple | None, usage: dict, stream: bool) -> None:
        part = {"functionCall": {"name": call[0], "args": call[1]}} if call else {"text": text}
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": f"gw-{len(self.gateway.billed)}",
        }
        if stream:
            self._send_sse([(None, chunk)])
        else:
            self._send_json(200, chunk)

    # --- transport ------------------------------------------------------------------------------
    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def _record(self) -> None:
        self._seen = Seen(self.command, self.path, dict(self.headers.items()))
        with self.gateway.lock:
            self.gateway.seen.append(self._seen)

    def send_response(self, code: int, message: str | None = None) -> None:
        self._seen.status = code
        super().send_response(code, message)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_sse(self, events: list[tuple[str | None, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def _wants_json(body: dict[str, Any]) -> bool:
    config = body.get("generationConfig") or {}
    return config.get("responseMimeType") == "application/json"


def _json_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A plausible answer to Gemini CLI's JSON side questions (next speaker, model routing)."""
    schema = (
        (body.get("generationConfig") or {}).get("responseJsonSchema")
        or (body.get("generationConfig") or {}).get("responseSchema")
        or {}
    )
    props = schema.get("properties") or {}
    answer: dict[str, Any] = {}
    for name, spec in props.items():
        choices = spec.get("enum")
        answer[name] = "user" if name == "next_speaker" else (choices[0] if choices else "ok")
    return answer or {"reasoning": "done", "next_speaker": "user"}


# --- running a real CLI offline -----------------------------------------------------------------
@dataclass
class AgentRun:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    root: str
    billed: list[Billed]
    seen: list[Seen]
    timed_out: bool = False
    sim_tokens: dict[str, int] | None = None  # with ``sim``: the prompt/completion it served

    def events(self) -> list[dict[str, Any]]:
        """The JSON lines of stdout (stream-json / --json output)."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out


def cli_path(name: str) -> str | None:
    """The installed CLI (by binary or agent name: ``claude`` or ``claude-code``), or None."""
    found = CLI_PATHS.get(BINARY.get(name, name))
    return str(found) if found is not None else None


def missing_reason(name: str) -> str | None:
    """Why a real-CLI test cannot run here (for pytest.skip), or None when it can.

    With ``ELOLEDGER_REQUIRE_CLIENTS=1`` there is no such reason: the test fails instead, so a
    CI that installed the CLIs cannot go green having run none of these tests.
    """
    reason = _why_not(name)
    if reason is not None:
        require(reason)
    return reason


def require(reason: str) -> None:
    """Fail the test (instead of the caller's skip) when the real-CLI tests are required."""
    if os.environ.get(REQUIRE_ENV) == "1":
        import pytest

        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: the real-CLI tests must run)", pytrace=False)


def _why_not(name: str) -> str | None:
    if cli_path(name) is None:
        return f"{name} not installed in {LOOKED_IN} or on PATH (run scripts/install_clients.sh)"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare/ip missing: cannot isolate the CLI from the network"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return "unshare -n not permitted here (needs root or user namespaces)"
    return None


def canonical_invocation(
    agent: str,
    prompt: str,
    *,
    home: Path,
    workdir: Path,
    key: str = GOOD_KEY,
    model: str = "gw-model",
    max_turns: int = 8,
    extra_provider: str = "",
) -> tuple[list[str], dict[str, str]]:
    """(argv, env) of the canonical headless run (docs/observed/agents.md) with ``{root}`` placeholders.

    ``agent`` is "claude-code", "codex" or "gemini-cli". Prepares the isolated HOME (Codex's
    CODEX_HOME, Gemini's settings.json). ``extra_provider`` is appended inside Codex's provider
    table (e.g. ``,supports_websockets=true``).
    """
    home.mkdir(parents=True, exist_ok=True)
    if agent == "claude-code":
        argv = [str(cli_path("claude")), "-p", prompt, "--output-format", "stream-json"]
        argv += ["--verbose", "--max-turns", str(max_turns), "--model", model]
        argv += ["--permission-mode", "acceptEdits", "--allowedTools", "Bash,Edit,Write,Read"]
        env = {"HOME": str(home), "ANTHROPIC_BASE_URL": "{root}", "ANTHROPIC_API_KEY": key}
        return argv, {**env, "DISABLE_AUTOUPDATER": "1"}
    if agent == "codex":
        (home / ".codex").mkdir(exist_ok=True)
        provider = (
            '{name="eloledger",base_url="{root}/v1",env_key="ELOLEDGER_AGENT_KEY",'
            f'wire_api="responses"{extra_provider}}}'
        )
        argv = [str(cli_path("codex")), "exec", "--json", "--skip-git-repo-check"]
        argv += ["-s", "workspace-write", "-C", str(workdir), "-m", model]
        argv += ["-c", "model_provider=eloledger", "-c", f"model_providers.eloledger={provider}"]
        # Codex refuses to set up its command helpers when CODEX_HOME lies under the temporary
        # folder (pytest's tmp_path is under /tmp), and then runs no tool at all: give it a
        # temporary folder of its own inside HOME.
        (home / "tmp").mkdir(exist_ok=True)
        env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "TMPDIR": str(home / "tmp")}
        return [*argv, prompt], {**env, "ELOLEDGER_AGENT_KEY": key}
    if agent == "gemini-cli":
        (home / ".gemini").mkdir(exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        argv = [str(cli_path("gemini")), "-p", prompt, "-o", "stream-json", "--skip-trust"]
        env = {"HOME": str(home), "GEMINI_API_KEY": key, "GOOGLE_GEMINI_BASE_URL": "{root}"}
        return [*argv, "--yolo", "-m", model], env
    raise ValueError(f"unknown agent {agent!r}")


def run_agent(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | Path,
    config: AgentGatewayConfig | None = None,
    timeout: float = 120,
    sim: dict[str, Any] | None = None,
) -> AgentRun:
    """Run ``argv`` with the gateway inside one fresh network namespace; ``{root}`` is filled in.

    ``env`` is the CLI's whole environment (PATH is added when missing). The CLI's stdin is
    closed; on timeout its process group is killed and ``timed_out`` is set. With ``sim``
    (keyword arguments of ``eloledger.sim.running_sim``) the embedded simulator serves
    instead of the gateway: nothing is billed then, and ``seen`` counts its requests.
    """
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    with tempfile.TemporaryDirectory(prefix="agentgw-") as tmp:
        job = Path(tmp) / "job.json"
        result = Path(tmp) / "result.json"
        job.write_text(
            json.dumps(
                {
                    "argv": argv,
                    "env": full_env,
                    "cwd": str(cwd),
                    "config": (config or AgentGatewayConfig()).to_json(),
                    "sim": sim,
                    "timeout": timeout,
                    "result": str(result),
                }
            )
        )
        shell = 'ip link set lo up && exec "$@"'
        cmd = ["unshare", "-n", "sh", "-c", shell, "_", sys.executable, __file__, str(job)]
        subprocess.run(cmd, check=True, timeout=timeout + 30, stdin=subprocess.DEVNULL)
        data = json.loads(result.read_text())
    billed = [Billed(**{**b, "canonical": CallUsage(**b["canonical"])}) for b in data.pop("billed")]
    seen = [Seen(**s) for s in data.pop("seen")]
    return AgentRun(billed=billed, seen=seen, **data)


def _drive(job_path: str) -> None:
    """Inside the namespace: serve, run the CLI, write everything to the result file."""
    job = json.loads(Path(job_path).read_text())
    if job["sim"] is not None:
        from eloledger.sim import running_sim

        with running_sim(**job["sim"]) as server:
            out = _run_cli(job, server.base_url)
            out["seen"] = [
                asdict(Seen(*route.split(" ", 1), {}, status))
                for (route, status), count in server.stats.requests.items()
                for _ in range(count)
            ]
            out["sim_tokens"] = {
                "prompt_tokens": server.stats.prompt_tokens,
                "completion_tokens": server.stats.completion_tokens,
            }
    else:
        with serve(AgentGatewayConfig.from_json(job["config"])) as gateway:
            out = _run_cli(job, gateway.root)
            with gateway.lock:
                out["billed"] = [
                    {**asdict(b), "canonical": asdict(b.canonical)} for b in gateway.billed
                ]
                out["seen"] = [asdict(s) for s in gateway.seen]
    Path(job["result"]).write_text(json.dumps(out))


def _run_cli(job: dict[str, Any], root: str) -> dict[str, Any]:
    fill = lambda s: s.replace("{root}", root)  # noqa: E731
    started = time.monotonic()
    proc = subprocess.Popen(
        [fill(a) for a in job["argv"]],
        cwd=job["cwd"],
        env={k: fill(v) for k, v in job["env"].items()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=job["timeout"])
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    return {
        "returncode": proc.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "wall_s": time.monotonic() - started,
        "root": root,
        "billed": [],
        "seen": [],
        "timed_out": timed_out,
    }


if __name__ == "__main__":
    _drive(sys.argv[1])
