"""A strict local gateway for the doctor's tests: it serves ONLY the genuine paths.

Unlike a forgiving simulator, a request to ``/chat/completions`` without the ``/v1`` really
404s here, a key in the wrong header really 401s (and, like real gateways, the 401 message
echoes the key it received), and each failure mode of the issue can be switched on per test.

Paths under ``prefix`` (e.g. ``/api``): ``GET /v1/models``, ``POST /v1/chat/completions``,
``POST /v1/responses``, ``POST /v1/messages``, ``GET /v1beta/models``,
``POST /v1beta/models/<model>:generateContent`` and ``:streamGenerateContent?alt=sse``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

GOOD_KEY = "sk-strict-0123456789abcdef"

MODES = (
    "ok",
    "forbidden",  # 403 on generation
    "rate_limited",  # 429 with Retry-After
    "quota",  # 429 insufficient_quota
    "server_error",  # 500 on everything past auth
    "slow",  # sleep `delay` seconds before any answer
    "html",  # 200 text/html login page on every path
    "usage_missing",  # no usage anywhere
    "usage_zero",  # usage present, all zero
    "stream_no_usage",  # streams carry no usage; non-stream answers do
    "reject",  # 400 invalid_request_error on generation
    "redirect",  # 302 to a login page on every path
    "midstream_error",  # streams answer 200, then an error event instead of content
    "late_input_usage",  # Anthropic streams: input_tokens 0 at message_start, real in delta
    "usage_details",  # OpenAI usage with cached (4) and reasoning (1) token details
)


@dataclass
class GatewayConfig:
    prefix: str = ""
    keys: frozenset[str] = frozenset({GOOD_KEY})
    header_forms: frozenset[str] = frozenset({"bearer", "x-api-key"})  # + x-goog-api-key on Gemini
    models: tuple[str, ...] = ("gpt-strict", "claude-strict", "gemini-strict")
    mode: str = "ok"
    retry_after: str = "7"
    delay: float = 2.0
    echo_key: bool = True  # 401 bodies quote the received key, as real gateways do
    tls: tuple[str, str] | None = None  # (certfile, keyfile): serve https with this cert
    # what generation answers: a fixed text, or a function of the request's prompt text
    reply: str | Callable[[str], str] = "OK"
    min_max_tokens: int = 0  # 400 invalid_request_error when max_tokens is below this
    # model asked for -> the model that answers (a LiteLLM fallback): the body's model and,
    # with litellm_headers, x-litellm-model-group / -model-name / -attempted-fallbacks say it
    answered_by: dict[str, str] = field(default_factory=dict)
    litellm_headers: bool = False
    # request parameters the deployment lacks: 400 with LiteLLM's UnsupportedParamsError
    unsupported_params: tuple[str, ...] = ()
    # every generation answers this (status, content-type, body, headers): a gateway's shape
    canned: tuple[int, str, str, dict[str, str]] | None = None
    # generations whose prompt this says yes to answer 500 (the rest answer normally)
    fail_when: Callable[[str], bool] | None = None


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class StrictGateway:
    config: GatewayConfig = field(default_factory=GatewayConfig)
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0

    @property
    def root(self) -> str:
        """The gateway root (no /v1): what Anthropic-style clients take."""
        scheme = "https" if self.config.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}{self.config.prefix}"

    @property
    def v1(self) -> str:
        """The root plus /v1: what OpenAI-style clients take."""
        return self.root + "/v1"


@contextmanager
def serve(config: GatewayConfig | None = None) -> Iterator[StrictGateway]:
    """Run a strict gateway on 127.0.0.1 (random port) for the duration of the block."""
    gateway = StrictGateway(config or GatewayConfig())
    handler = type("Handler", (_Handler,), {"gateway": gateway})
    server = _QuietServer(("127.0.0.1", 0), handler)
    if gateway.config.tls:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*gateway.config.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
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
    """Clients that give up (probe timeouts) break the pipe: that is expected, not an error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    gateway: StrictGateway
    protocol_version = "HTTP/1.0"
    extra_headers: dict[str, str] = {}  # noqa: RUF012 - replaced per request, never mutated

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    # --- dispatch -------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_HEAD(self) -> None:  # noqa: N802
        self._send_json(404, {"error": {"message": "Not Found"}})

    def _dispatch(self, method: str) -> None:
        cfg = self.gateway.config
        parts = urlsplit(self.path)
        body = self._read_body()
        self.gateway.requests.append(
            Recorded(
                method,
                parts.path,
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
        )
        if cfg.mode == "slow":
            time.sleep(cfg.delay)
        if cfg.mode == "redirect":
            self._send_raw(302, "text/html", b"", {"Location": "https://sso.example/login"})
            return
        if cfg.mode == "html":
            self._send_raw(200, "text/html; charset=utf-8", _LOGIN_PAGE.encode())
            return
        path = parts.path
        if not path.startswith(cfg.prefix + "/"):
            self._not_found(method, path)
            return
        rest = path[len(cfg.prefix) :]
        route = self._route(method, rest)
        if route is None:
            self._not_found(method, path)
            return
        wire, action, model_in_path = route
        if not self._authorised(wire):
            self._unauthorised(wire)
            return
        if cfg.mode == "server_error":
            self._error(wire, 500, "api_error", "internal server error")
            return
        if action == "models":
            self._send_models(wire)
            return
        model = model_in_path or (body or {}).get("model")
        if cfg.canned is not None:
            status, ctype, text, headers = cfg.canned
            self._send_raw(status, ctype, text.encode(), headers)
            return
        if model not in cfg.models:
            self._error(wire, 404, "model_not_found", f"The model `{model}` does not exist")
            return
        if cfg.fail_when is not None and cfg.fail_when(_prompt_of(body or {})):
            self._error(wire, 500, "api_error", "internal server error")
            return
        if cfg.mode == "forbidden":
            self._error(wire, 403, "permission_error", "this key may not use this model")
            return
        if cfg.mode == "rate_limited":
            self._error(
                wire,
                429,
                "rate_limit_exceeded",
                "Rate limit reached, retry later",
                headers={"Retry-After": cfg.retry_after},
            )
            return
        lacking = [p for p in cfg.unsupported_params if p in (body or {})]
        if lacking:
            self._error(
                wire,
                400,
                "400",
                f"litellm.UnsupportedParamsError: anthropic does not support parameters: "
                f"{lacking}, for model={model}. To drop these, set `litellm.drop_params=True` "
                "or for proxy:\n\n`litellm_settings:\n drop_params: true`\n.",
            )
            return
        limit = (body or {}).get("max_tokens", (body or {}).get("max_output_tokens"))
        if cfg.mode == "reject" or (isinstance(limit, int) and limit < cfg.min_max_tokens):
            self._error(wire, 400, "invalid_request_error", "max_tokens: must be at least 16")
            return
        if cfg.mode == "quota":
            self._error(
                wire,
                429,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing",
            )
            return
        stream = bool((body or {}).get("stream")) or action == "stream"
        if stream and cfg.mode == "midstream_error":
            error = {"type": "overloaded_error", "message": "Overloaded"}
            self._send_sse([("error", {"type": "error", "error": error})])
            return
        answering = cfg.answered_by.get(model, model)
        if cfg.litellm_headers:
            self.extra_headers = {
                "x-litellm-model-group": answering,
                "x-litellm-model-name": f"openai/{answering}",
                "x-litellm-attempted-fallbacks": "1" if answering != model else "0",
            }
        getattr(self, f"_answer_{wire}")(answering, body or {}, stream, parse_qs(parts.query))

    def _route(self, method: str, rest: str) -> tuple[str, str, str | None] | None:
        if method == "GET" and rest == "/v1/models":
            return (
                "anthropic" if "anthropic-version" in self.headers else "openai",
                "models",
                None,
            )
        if method == "GET" and rest == "/v1beta/models":
            return ("gemini", "models", None)
        if method == "POST" and rest == "/v1/chat/completions":
            return ("chat", "generate", None)
        if method == "POST" and rest == "/v1/responses":
            return ("responses", "generate", None)
        if method == "POST" and rest == "/v1/messages":
            return ("anthropic", "generate", None)
        if method == "POST" and rest.startswith("/v1beta/models/") and ":" in rest:
            model, _, verb = rest[len("/v1beta/models/") :].partition(":")
            if verb == "generateContent":
                return ("gemini", "generate", model)
            if verb == "streamGenerateContent":
                return ("gemini", "stream", model)
        return None

    # --- auth -----------------------------------------------------------------------------
    def _presented_key(self, wire: str) -> str | None:
        forms = set(self.gateway.config.header_forms)
        if wire == "gemini":
            forms.add("x-goog-api-key")
        if "bearer" in forms:
            value = self.headers.get("Authorization", "")
            if value.startswith("Bearer "):
                return value[len("Bearer ") :]
        if "x-api-key" in forms and self.headers.get("x-api-key"):
            return self.headers["x-api-key"]
        if "x-goog-api-key" in forms and self.headers.get("x-goog-api-key"):
            return self.headers["x-goog-api-key"]
        return None

    def _authorised(self, wire: str) -> bool:
        return self._presented_key(wire) in self.gateway.config.keys

    def _unauthorised(self, wire: str) -> None:
        received = (
            self.headers.get("Authorization", "").removeprefix("Bearer ")
            or self.headers.get("x-api-key")
            or self.headers.get("x-goog-api-key")
            or ""
        )
        echo = f": {received}" if self.gateway.config.echo_key and received else ""
        if wire == "gemini":
            self._send_json(
                400,
                {
                    "error": {
                        "code": 400,
                        "status": "INVALID_ARGUMENT",
                        "message": f"API key not valid{echo}",
                        "details": [{"reason": "API_KEY_INVALID"}],
                    }
                },
            )
            return
        self._error(wire, 401, "invalid_api_key", f"Incorrect API key provided{echo}")

    # --- answers --------------------------------------------------------------------------
    def _text(self, body: dict) -> str:
        reply = self.gateway.config.reply
        return reply if isinstance(reply, str) else reply(_prompt_of(body))

    def _usage_numbers(self, stream: bool) -> tuple[int, int] | None:
        mode = self.gateway.config.mode
        if mode == "usage_missing" or (mode == "stream_no_usage" and stream):
            return None
        if mode == "usage_zero":
            return (0, 0)
        return (9, 1)

    def _details(self, inp: str, out: str) -> dict[str, Any]:
        if self.gateway.config.mode != "usage_details":
            return {}
        return {
            f"{inp}_tokens_details": {"cached_tokens": 4},
            f"{out}_tokens_details": {"reasoning_tokens": 1},
        }

    def _answer_chat(self, model: str, body: dict, stream: bool, query: dict) -> None:
        usage = self._usage_numbers(stream)
        usage_obj = (
            None
            if usage is None
            else {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
                **self._details("prompt", "completion"),
            }
        )
        if not stream:
            payload = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "length",
                        "message": {"role": "assistant", "content": self._text(body)},
                    }
                ],
            }
            if usage_obj:
                payload["usage"] = usage_obj
            self._send_json(200, payload)
            return
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model}
        events = [
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": self._text(body)},
                        "finish_reason": None,
                    }
                ],
            },
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        ]
        wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if usage_obj and wants_usage:
            events.append({**base, "choices": [], "usage": usage_obj})
        self._send_sse([(None, e) for e in events], done=True)

    def _answer_responses(self, model: str, body: dict, stream: bool, query: dict) -> None:
        usage = self._usage_numbers(stream)
        response = {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": model,
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": self._text(body), "annotations": []}
                    ],
                }
            ],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
        }
        if usage is not None:
            response["usage"] = {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "total_tokens": sum(usage),
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
                **self._details("input", "output"),
            }
        if not stream:
            self._send_json(200, response)
            return
        created = {**response, "status": "in_progress", "output": []}
        created.pop("usage", None)
        self._send_sse(
            [
                (
                    "response.created",
                    {"type": "response.created", "sequence_number": 0, "response": created},
                ),
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": 1,
                        "item_id": "msg_1",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": self._text(body),
                        "logprobs": [],
                    },
                ),
                (
                    "response.completed",
                    {"type": "response.completed", "sequence_number": 2, "response": response},
                ),
            ]
        )

    def _answer_anthropic(self, model: str, body: dict, stream: bool, query: dict) -> None:
        usage = self._usage_numbers(stream)
        if not stream:
            payload = {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": self._text(body)}],
                "stop_reason": "max_tokens",
                "stop_sequence": None,
            }
            if usage is not None:
                payload["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
            self._send_json(200, payload)
            return
        late = self.gateway.config.mode == "late_input_usage"
        start_usage = {"input_tokens": usage[0] if usage and not late else 0, "output_tokens": 0}
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
        }
        if usage is not None:
            delta["usage"] = {"output_tokens": usage[1]}
            if late:
                delta["usage"]["input_tokens"] = usage[0]
        self._send_sse(
            [
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_1",
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": start_usage,
                        },
                    },
                ),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": self._text(body)},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", delta),
                ("message_stop", {"type": "message_stop"}),
            ]
        )

    def _answer_gemini(self, model: str, body: dict, stream: bool, query: dict) -> None:
        usage = self._usage_numbers(stream)
        chunk: dict[str, Any] = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": self._text(body)}]},
                    "finishReason": "MAX_TOKENS",
                    "index": 0,
                }
            ],
            "modelVersion": model,
        }
        if usage is not None:
            chunk["usageMetadata"] = {
                "promptTokenCount": usage[0],
                "candidatesTokenCount": usage[1],
                "totalTokenCount": sum(usage),
            }
        if not stream:
            self._send_json(200, chunk)
            return
        self._send_sse([(None, chunk)])

    def _send_models(self, wire: str) -> None:
        models = self.gateway.config.models
        if wire == "gemini":
            self._send_json(
                200, {"models": [{"name": f"models/{m}", "displayName": m} for m in models]}
            )
            return
        self._send_json(
            200,
            {
                "object": "list",
                "has_more": False,
                "data": [
                    {
                        "id": m,
                        "object": "model",
                        "type": "model",
                        "display_name": m,
                        "created": 1,
                        "created_at": "2026-01-01T00:00:00Z",
                        "owned_by": "strict",
                    }
                    for m in models
                ],
            },
        )

    # --- errors ---------------------------------------------------------------------------
    def _not_found(self, method: str, path: str) -> None:
        self._send_json(
            404,
            {
                "error": {
                    "message": f"Invalid URL ({method} {path})",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        )

    def _error(
        self, wire: str, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        if wire == "anthropic":
            kind = {
                401: "authentication_error",
                403: "permission_error",
                404: "not_found_error",
                429: "rate_limit_error",
                500: "api_error",
            }.get(status, "invalid_request_error")
            if code == "insufficient_quota":
                kind = "billing_error"
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        elif wire == "gemini":
            payload = {"error": {"code": status, "message": message, "status": code.upper()}}
        else:
            payload = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": code,
                }
            }
        self._send_json(status, payload, headers)

    # --- transport ------------------------------------------------------------------------
    def _read_body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if not length:
            return None
        raw = self.rfile.read(length)
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, "application/json", json.dumps(payload).encode(), headers)

    def _send_raw(
        self, status: int, content_type: str, data: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in {**self.extra_headers, **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_sse(self, events: list[tuple[str | None, Any]], done: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(b": PROCESSING\n\n")
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _prompt_of(body: dict) -> str:
    """The user text of a chat, responses, messages or Gemini request."""
    if isinstance(body.get("input"), str):
        return body["input"]
    parts: list[str] = []
    for message in body.get("messages") or body.get("input") or body.get("contents") or []:
        content = message.get("content", message.get("parts"))
        if isinstance(content, str):
            parts.append(content)
            continue
        for part in content or []:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str):
                parts.append(text)
    return "\n".join(parts)


_LOGIN_PAGE = """<!doctype html>
<html><head><title>Sign in - Corporate SSO</title></head>
<body><form action="/login" method="post"><input name="user"><input name="password"
type="password"></form></body></html>
"""
