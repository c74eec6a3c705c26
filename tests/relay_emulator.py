"""An OpenAI-compatible relay of the one-api / new-api family, for the doctor's gateway tests.

Written from the relays' public sources and docs (songquanpeng/one-api ``middleware/auth.go``,
``middleware/distributor.go``, ``middleware/utils.go``, ``model/token.go``; QuantumNous/new-api's
``insufficient_user_quota`` errors) and from users' reports of what key resellers answer:

- error bodies are OpenAI-shaped, ``{"error":{"message","type","code"}}`` with the relay's own
  ``type`` (``one_api_error`` / ``new_api_error``) and the message suffixed
  ``(request id: ...)``; messages are Chinese by default, English with ``lang="en"``;
- a bad token: ``无效的令牌`` / ``Invalid token``, answered with 401, 403 or 400 (deployments and
  forks differ: ``auth_status``); no token: ``未提供令牌``;
- an exhausted token: ``该令牌额度已用尽 TokenStatusExhausted[sk-abc***xyz]`` (401); a user
  without quota: 403 ``insufficient_user_quota`` ``用户额度不足`` / ``user quota is not enough``;
- a model no channel serves: 503 ``当前分组 default 下对于模型 X 无可用渠道`` /
  ``No available channel for model X under group default`` (code ``model_not_found``);
- a relay that answers ``stream=true`` with one complete JSON body (some channels do);
- its own upstream timing out: 408 after a short wait, well inside a client's timeout.

Everything else (the good token, a listed model) answers like OpenAI, streams with usage.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GOOD = "sk-Rl7xQ2mN9pV4wK8sT3bY6cJ1"
EXHAUSTED = "sk-Zq5hF8dL2gW7rX4nM9vB3kP6"  # the token's own quota is used up
NO_USER_QUOTA = "sk-Jt3cV6yH1sD9fQ5wE8aR2uN7"  # the user's balance is empty

MESSAGES = {
    "zh": {
        "invalid": "无效的令牌",
        "missing": "未提供令牌",
        "exhausted": "该令牌额度已用尽 TokenStatusExhausted[sk-{head}***{tail}]",
        "user_quota": "用户额度不足",
        "no_channel": "当前分组 default 下对于模型 {model} 无可用渠道",
        "timeout": "上游响应超时",
    },
    "en": {
        "invalid": "Invalid token",
        "missing": "No token provided",
        "exhausted": "token quota is exhausted TokenStatusExhausted[sk-{head}***{tail}]",
        "user_quota": "user quota is not enough",
        "no_channel": "No available channel for model {model} under group default",
        "timeout": "upstream response timed out",
    },
}


# Observed from the LiteLLM proxy 1.108.7 when its upstream rejects the proxy's own key.
LITELLM_UPSTREAM_401 = (
    "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key "
    "provided.\n\nLiteLLM: model group '{model}' failed with the error above. No fallback was "
    "attempted."
)


@dataclass
class RelayConfig:
    lang: str = "zh"
    kind: str = "new_api_error"  # or one_api_error
    auth_status: int = 401  # what a bad token gets: 401, 403 or 400
    # listed models and how each answers: ok | json_stream | timeout | no_channel | cut |
    # litellm_upstream_401 (a LiteLLM-shaped upstream failure, for gateways in front of relays)
    models: dict[str, str] = field(
        default_factory=lambda: {
            "gpt-4o-mini": "ok",
            "json-stream": "json_stream",
            "slow-upstream": "timeout",
            "unrouted": "no_channel",
            "cut-upstream": "cut",
        }
    )
    timeout_after: float = 0.3  # seconds before a "timeout" model's 408
    ok_status_errors: bool = False  # classic one-api's TokenAuth: token errors under HTTP 200


@dataclass
class Relay:
    config: RelayConfig
    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def v1(self) -> str:
        return self.root + "/v1"


@contextmanager
def serve(config: RelayConfig | None = None) -> Iterator[Relay]:
    """Run the relay on 127.0.0.1 (a free port) for the duration of the block."""
    relay = Relay(config or RelayConfig(), 0)
    handler = type("Handler", (_Handler,), {"relay": relay})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    relay.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield relay
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class _Handler(BaseHTTPRequestHandler):
    relay: Relay
    protocol_version = "HTTP/1.1"
    _ids = iter(range(10**9))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    # -- the relay's pipeline: token auth, then the distributor, then the channel ---------------
    def _dispatch(self, method: str) -> None:
        path = self.path.split("?")[0]
        self.relay.requests.append((method, path))
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path not in ("/v1/models", "/v1/chat/completions"):
            self._error(404, f"Invalid URL ({method} {path})", "invalid_request_error")
            return
        if not self._token_ok():
            return
        if path == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "relay"} for m in self._routed()]
            self._json(200, {"object": "list", "data": data, "success": True})
            return
        body = json.loads(raw or b"{}")
        model = str(body.get("model") or "")
        how = self.relay.config.models.get(model, "no_channel")
        if how == "no_channel":
            text = self._text("no_channel").format(model=model)
            self._error(503, text, code="model_not_found")
            return
        if how == "litellm_upstream_401":  # the body LiteLLM 1.108.7 gives (observed)
            self._json(
                401,
                {
                    "error": {
                        "message": LITELLM_UPSTREAM_401.format(model=model),
                        "type": "authentication_error",
                        "code": "401",
                    }
                },
            )
            return
        if how == "timeout":
            time.sleep(self.relay.config.timeout_after)
            self._error(408, self._text("timeout"), code="timeout")
            return
        stream = bool(body.get("stream"))
        if stream and how == "cut":  # the upstream dropped mid-stream: many deltas, no end
            self._stream(model, cut_after=int(body.get("max_tokens") or 16) + 8)
        elif stream and how == "ok":
            self._stream(model)
        else:  # json_stream: one complete body even when a stream was asked
            self._json(200, self._completion(model))

    def _token_ok(self) -> bool:
        auth = self.headers.get("authorization") or ""
        key = auth.removeprefix("Bearer ").strip()
        cfg = self.relay.config
        if cfg.ok_status_errors and key not in (GOOD,):
            name = "exhausted" if key == EXHAUSTED else "invalid" if key else "missing"
            text = self._text(name).format(head=key[3:6], tail=key[-3:])
            self._error(200, text, kind="one_api_error")
            return False
        if not key:
            self._error(cfg.auth_status, self._text("missing"))
            return False
        if key == EXHAUSTED:
            self._error(401, self._text("exhausted").format(head=key[3:6], tail=key[-3:]))
            return False
        if key == NO_USER_QUOTA:
            self._error(403, self._text("user_quota"), code="insufficient_user_quota")
            return False
        if key != GOOD:
            self._error(cfg.auth_status, self._text("invalid"))
            return False
        return True

    def _routed(self) -> list[str]:
        return [m for m, how in self.relay.config.models.items() if how != "no_channel"]

    # -- answers ---------------------------------------------------------------------------------
    def _text(self, name: str) -> str:
        return MESSAGES[self.relay.config.lang][name]

    def _request_id(self) -> str:
        return f"2026120110{next(self._ids):08d}relay"

    def _error(self, status: int, message: str, kind: str | None = None, code: str = "") -> None:
        rid = self._request_id()
        payload = {
            "error": {
                "message": f"{message} (request id: {rid})",
                "type": kind or self.relay.config.kind,
                "param": "",
                "code": code,
            }
        }
        self._json(status, payload, rid)

    def _completion(self, model: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-relay{next(self._ids)}",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "OK"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
        }

    def _stream(self, model: str, cut_after: int = 0) -> None:
        cid = f"chatcmpl-relay{next(self._ids)}"

        def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
            choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
            event = {
                "id": cid,
                "object": "chat.completion.chunk",
                "model": model,
                "choices": choices,
            }
            if usage:
                event["usage"] = usage
            return b"data: " + json.dumps(event).encode() + b"\n\n"

        parts = [
            chunk({"role": "assistant", "content": "OK"}),
            chunk({}, "stop"),
            chunk({}, usage={"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}),
            b"data: [DONE]\n\n",
        ]
        if cut_after:  # words of 6-7 characters: the ~4 characters a token guess overshoots
            parts = [chunk({"content": " answer"}) for _ in range(cut_after)]
        data = b"".join(parts)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-oneapi-request-id", self._request_id())
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, payload: Any, rid: str | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-oneapi-request-id", rid or self._request_id())
        self.end_headers()
        self.wfile.write(data)
