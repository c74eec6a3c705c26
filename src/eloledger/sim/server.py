"""SimServer: the OpenAI- and Anthropic-compatible simulator on asyncio streams.

Routing, auth and fault injection live here; wire shapes in ``protocols``, the simulated
model in ``model``, the HTTP layer in ``http``. Per-request fault: header
``x-sim-fault: MODE`` (or ``none``) overrides the server's mode. Per-request sample index:
the chat ``seed`` field or header ``x-sim-sample`` (else a per-prompt request counter).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import random
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import orjson

from eloledger.sim import http
from eloledger.sim.agent import respond
from eloledger.sim.agentwire import Usage, has_tools, read_turn, render, stream_error
from eloledger.sim.faults import (
    FAULT_MODES,
    HTML_PAGE,
    STATUS_FAULTS,
    bad_request_body,
    error_body,
)
from eloledger.sim.model import DEFAULT_TIMING, MODEL_TIMING, generate, make_rng
from eloledger.sim.protocols import (
    USAGE_NONE,
    USAGE_NORMAL,
    USAGE_ZERO,
    Ask,
    BadBody,
    ChatWire,
    MessagesWire,
    ResponsesWire,
    parse_ask,
)

ROUTES = {
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
    "/v1/messages": "messages",
}
GEMINI_PREFIX = "/v1beta/models/"  # + "<model>:generateContent" | ":streamGenerateContent" | ...
GEMINI_VERBS = ("generateContent", "streamGenerateContent", "countTokens")
MIN_TICK = 0.02  # seconds between writes of one stream: tokens due meanwhile go in one write
SLOW_TTFT, SLOW_TOKEN = 6.0, 15.0  # latency multipliers of the 'slow' fault
RETRY_AFTER = 1.0  # seconds at speed 1 (scaled by speed like every latency)


@dataclass
class SimStats:
    """Counters for tests and benchmarks (written by the server's loop, read from anywhere)."""

    requests: Counter = field(default_factory=Counter)  # ("POST /v1/messages", 200) -> n
    faults: Counter = field(default_factory=Counter)  # fault mode -> n
    prompt_tokens: int = 0
    completion_tokens: int = 0
    streams_active: int = 0
    streams_peak: int = 0
    connections: int = 0

    def total(self, path: str | None = None, status: int | None = None) -> int:
        """Number of requests, optionally only for one path and/or status."""
        return sum(
            n
            for (route, code), n in list(self.requests.items())  # copy: another thread writes
            if (path is None or route.endswith(" " + path)) and (status is None or code == status)
        )


class SimServer:
    """An HTTP server on 127.0.0.1 that speaks the real wire formats with a simulated model."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        fault: str | None = None,
        fault_rate: float = 1.0,
        seed: int = 0,
        speed: float = 1.0,
        api_keys: set[str] | None = None,
        models: tuple[str, ...] = ("sim-small", "sim-large"),
    ) -> None:
        if fault is not None and fault not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {fault!r}; known: {', '.join(FAULT_MODES)}")
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError("fault_rate must be between 0 and 1")
        if not speed > 0 or not math.isfinite(speed):
            raise ValueError("speed must be a positive number")
        self.host = host
        self.port = port
        self.fault = fault
        self.fault_rate = fault_rate
        self.seed = seed
        self.speed = speed
        self.api_keys = api_keys
        self.models = tuple(models)
        self.stats = SimStats()
        # Seconds between writes of one stream; 0 = one timer and one write per token
        # (the naive design, kept for the benchmark's baseline).
        self.min_tick = MIN_TICK
        self._fault_rng = random.Random(f"fault|{seed}")
        self._sample_counters: Counter = Counter()
        self._agent_sessions: Counter = Counter()  # (model, task) -> sessions begun
        self._request_counter = 0
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def base_url(self) -> str:
        """Root URL (what the Anthropic SDK and Claude Code take)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Root + ``/v1`` (what the OpenAI SDK and Codex take)."""
        return self.base_url + "/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self.port, backlog=512, limit=http.MAX_HEADER_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> SimServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- connection and request handling -------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.stats.connections += 1
        try:
            while True:
                try:
                    request = await http.read_request(reader)
                except http.BadRequest as exc:
                    body = bad_request_body("openai", str(exc))
                    writer.write(http.json_response(400, body, keep_alive=False))
                    break
                if request is None:
                    break
                keep = await self._serve(request, writer)
                if not keep or not request.keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        except Exception:  # a simulator bug: drop this connection, keep serving the others
            self.stats.requests[("internal error", 500)] += 1
            http.reset_connection(writer)
        finally:
            self._tasks.discard(task)
            if not writer.transport.is_closing():
                with contextlib.suppress(Exception):
                    await writer.drain()
                writer.close()

    def _pick_fault(self, request: http.Request) -> str | None:
        asked = request.headers.get("x-sim-fault")
        if asked is not None:
            asked = asked.strip()
            return None if asked.lower() in ("", "none") else asked
        if self.fault is None:
            return None
        if self.fault_rate >= 1.0 or self._fault_rng.random() < self.fault_rate:
            return self.fault
        return None

    def _authorized(self, request: http.Request) -> bool:
        """Bearer or x-api-key (Claude Code may send both: either valid one is enough).

        Gemini clients send ``x-goog-api-key`` (or ``?key=``).
        """
        auth = request.headers.get("authorization", "")
        bearer = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        named = [request.headers.get(h, "").strip() for h in ("x-api-key", "x-goog-api-key")]
        query = (
            parse_qs(urlsplit(request.target).query).get("key", []) if "?" in request.target else []
        )
        keys = [k for k in (bearer, *named, *query) if k]
        if self.api_keys is None:
            return bool(keys)
        return any(k in self.api_keys for k in keys)

    async def _serve(self, request: http.Request, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; returns whether the connection may be reused."""
        self._request_counter += 1
        ids = {"x-request-id": f"req_sim{self._request_counter:08d}"}
        ids["request-id"] = ids["x-request-id"]
        route = request.method + " " + request.path
        is_anthropic = request.path == "/v1/messages" or "anthropic-version" in request.headers
        protocol = "anthropic" if is_anthropic else "openai"
        gemini_verb = _gemini_verb(request)
        if request.path.startswith("/v1beta"):
            protocol = "gemini"

        def reply(status: int, body: bytes, **kwargs: object) -> bool:
            self.stats.requests[(route, status)] += 1
            headers = {**ids, **kwargs.pop("headers", {})}  # type: ignore[dict-item]
            head_only = request.method == "HEAD"
            writer.write(
                http.response_bytes(status, body, headers=headers, head_only=head_only, **kwargs)
            )
            return True

        def reply_json(status: int, obj: object, headers: dict | None = None) -> bool:
            return reply(status, orjson.dumps(obj), headers=headers or {})

        fault = self._pick_fault(request)
        if fault is not None:
            if fault not in FAULT_MODES:
                message = f"unknown x-sim-fault {fault!r}; known: {', '.join(FAULT_MODES)}"
                return reply_json(400, bad_request_body(protocol, message))
            self.stats.faults[fault] += 1

        if request.headers.get("upgrade", "").lower() == "websocket":
            # Codex (supports_websockets=true) tries a WebSocket first: 426 makes it fall back
            # to HTTPS at once, where a 404 costs it five retries with backoff (~6 s).
            message = "WebSockets are not supported by the eloledger simulator; use HTTPS"
            body = bad_request_body(protocol, message)
            reply(426, orjson.dumps(body), keep_alive=False)
            return False
        api = ROUTES.get(request.path) if request.method == "POST" else None
        if gemini_verb is not None:
            api = "gemini"
        is_models = request.method == "GET" and any(
            request.path == p or request.path.startswith(p + "/")
            for p in ("/v1/models", "/v1beta/models")
        )
        if (api is None and not is_models) or fault == "404_path":
            body = error_body("404_path", protocol, method=request.method, path=request.path)
            return reply_json(404, body)
        if not self._authorized(request) or fault == "401":
            return reply_json(401, error_body("401", protocol, method="", path=""))
        if fault in STATUS_FAULTS and fault != "404_model":
            headers = {}
            if fault == "429":
                wait = RETRY_AFTER / self.speed
                headers["retry-after"] = str(int(wait)) if wait.is_integer() else f"{wait:.3f}"
                headers["retry-after-ms"] = str(max(1, round(wait * 1000)))
            if fault == "529" and protocol == "anthropic":
                headers["x-should-retry"] = "true"
            return reply_json(
                STATUS_FAULTS[fault],
                error_body(fault, protocol, method="", path=""),
                headers,
            )
        if fault == "html":
            return reply(200, HTML_PAGE, content_type="text/html; charset=utf-8")
        if is_models:
            return self._models(request, protocol, reply_json, fault)

        assert api is not None
        agent_body = self._agent_body(api, request.body)
        if agent_body is not None:
            return await self._agent(
                api, gemini_verb, agent_body, request, writer, reply_json, fault
            )
        try:
            ask = parse_ask(api, request.body)
        except BadBody as exc:
            return reply_json(400, bad_request_body(protocol, str(exc)))
        if ask.model not in self.models or fault == "404_model":
            body = error_body("404_model", protocol, method="", path="", model=ask.model)
            return reply_json(404, body)
        return await self._complete(ask, request, writer, fault, route, ids)

    def _models(self, request: http.Request, protocol: str, reply_json, fault: str | None) -> bool:
        wanted = request.path.removeprefix("/v1beta").removeprefix("/v1").removeprefix("/models")
        wanted = wanted.strip("/")
        if fault == "404_model" or (wanted and wanted not in self.models):
            body = error_body("404_model", protocol, method="", path="", model=wanted)
            return reply_json(404, body)
        names = [wanted] if wanted else list(self.models)
        if protocol == "gemini":
            methods = ["generateContent", "streamGenerateContent", "countTokens"]
            models = [
                {
                    "name": f"models/{name}",
                    "displayName": f"{name} (eloledger simulator)",
                    "supportedGenerationMethods": methods,
                }
                for name in names
            ]
            return reply_json(200, models[0] if wanted else {"models": models})
        if protocol == "anthropic":
            items = [
                {
                    "type": "model",
                    "id": name,
                    "display_name": f"{name} (eloledger simulator)",
                    "created_at": "2026-01-01T00:00:00Z",
                }
                for name in names
            ]
            if wanted:
                return reply_json(200, items[0])
            return reply_json(
                200,
                {"data": items, "has_more": False, "first_id": names[0], "last_id": names[-1]},
            )
        items = [
            {
                "id": name,
                "object": "model",
                "created": 1767225600,
                "owned_by": "eloledger-simulator",
            }
            for name in names
        ]
        if wanted:
            return reply_json(200, items[0])
        return reply_json(200, {"object": "list", "data": items})

    # -- the simulated agent (requests that offer tools; every Gemini request) ---------------

    @staticmethod
    def _agent_body(api: str, raw: bytes) -> dict | None:
        """The parsed body when this request is for the agent (else None: the chat path)."""
        if api not in ("messages", "responses", "gemini"):
            return None
        if api != "gemini" and b'"tools"' not in raw:  # the chat path: skip a second parse
            return None
        try:
            body = orjson.loads(raw or b"{}")
        except orjson.JSONDecodeError:
            return None if api != "gemini" else {}
        if not isinstance(body, dict):
            return None if api != "gemini" else {}
        wire = {"messages": "anthropic"}.get(api, api)
        return body if has_tools(wire, body) else None

    async def _agent(
        self,
        api: str,
        gemini_verb: tuple[str, str] | None,
        body: dict,
        request: http.Request,
        writer: asyncio.StreamWriter,
        reply_json,
        fault: str | None,
    ) -> bool:
        wire = {"messages": "anthropic"}.get(api, api)
        protocol = {"anthropic": "anthropic", "gemini": "gemini"}.get(wire, "openai")
        model = gemini_verb[0] if gemini_verb else body.get("model")
        if not isinstance(model, str) or not model:
            return reply_json(400, bad_request_body(protocol, "'model' is required"))
        if model not in self.models:
            body404 = error_body("404_model", protocol, method="", path="", model=model)
            return reply_json(404, body404)
        if gemini_verb and gemini_verb[1] == "countTokens":
            return reply_json(200, {"totalTokens": max(1, len(request.body) // 4)})
        stream = bool(body.get("stream")) or (gemini_verb or ("", ""))[1] == "streamGenerateContent"
        turn = read_turn(wire, model, body, stream)
        header = request.headers.get("x-sim-sample", "").strip()

        def new_key(model: str, task_id: str) -> str:
            if header:
                return f"s{header}"
            self._agent_sessions[(model, task_id)] += 1
            return f"n{self._agent_sessions[(model, task_id)]}"

        answer = respond(turn, seed=self.seed, new_key=new_key)
        usage = Usage(0, 0, 0, 0, 0) if fault == "zero_usage" else answer.usage
        ttft0, per_token = MODEL_TIMING.get(model, DEFAULT_TIMING)
        prompt = usage.fresh + usage.cache_read + usage.cache_write
        delay = ttft0 + 0.00002 * prompt + per_token * (usage.output + usage.reasoning)
        await asyncio.sleep(delay * (SLOW_TTFT if fault == "slow" else 1.0) / self.speed)
        route = request.method + " " + request.path
        ids = {"x-request-id": f"req_sim{self._request_counter:08d}"}
        if fault in ("reset", "sse_error") and not stream:
            self.stats.requests[(route, 0)] += 1
            http.reset_connection(writer)
            return False
        self.stats.requests[(route, 200)] += 1
        if fault in ("reset", "sse_error"):
            writer.write(http.stream_head(ids) + http.chunk(http.STREAM_COMMENT))
            if fault == "reset":
                await writer.drain()
                http.reset_connection(writer)
                return False
            writer.write(http.chunk(stream_error(wire)) + http.LAST_CHUNK)
            return True
        self.stats.prompt_tokens += prompt
        self.stats.completion_tokens += usage.output + usage.reasoning
        sent = None if fault == "no_usage" else usage
        data, is_stream = render(turn, answer.text, answer.call, sent)
        if is_stream:
            writer.write(http.stream_head(ids) + http.chunk(data) + http.LAST_CHUNK)
        else:
            writer.write(http.response_bytes(200, data, headers=ids))
        await writer.drain()
        return True

    def _sample_key(self, ask: Ask, request: http.Request) -> str:
        if ask.seed is not None:
            return f"seed{ask.seed}"
        header = request.headers.get("x-sim-sample")
        if header:
            return f"sample{header.strip()}"
        digest = hashlib.blake2b(ask.prompt.encode(), digest_size=8).digest()
        key = (ask.model, round(ask.temperature, 3), digest)
        self._sample_counters[key] += 1
        return f"count{self._sample_counters[key]}"

    async def _complete(
        self,
        ask: Ask,
        request: http.Request,
        writer: asyncio.StreamWriter,
        fault: str | None,
        route: str,
        ids: dict[str, str],
    ) -> bool:
        rng = make_rng(
            self.seed, ask.model, ask.temperature, self._sample_key(ask, request), ask.prompt
        )
        result = generate(ask.prompt, model=ask.model, temperature=ask.temperature, rng=rng)
        pieces = result.pieces
        finish = "stop"
        if ask.max_tokens is not None and len(pieces) > ask.max_tokens:
            pieces = pieces[: ask.max_tokens]
            finish = "length"
        ttft = result.ttft / self.speed
        per_token = result.per_token / self.speed
        if fault == "slow":
            ttft *= SLOW_TTFT
            per_token *= SLOW_TOKEN
        usage_mode = {"no_usage": USAGE_NONE, "zero_usage": USAGE_ZERO}.get(fault, USAGE_NORMAL)
        wire_cls = {"chat": ChatWire, "responses": ResponsesWire, "messages": MessagesWire}
        wire = wire_cls[ask.api](ask, usage_mode)
        prompt_tokens = result.prompt_tokens
        self.stats.prompt_tokens += prompt_tokens

        if not ask.stream:
            await asyncio.sleep(ttft + per_token * len(pieces))
            if fault in ("reset", "sse_error"):
                # No stream to break: a reset drops the connection before any byte.
                self.stats.requests[(route, 0)] += 1
                http.reset_connection(writer)
                return False
            self.stats.completion_tokens += len(pieces)
            text = "".join(pieces)
            body = orjson.dumps(wire.body(text, finish, prompt_tokens, len(pieces)))
            self.stats.requests[(route, 200)] += 1
            writer.write(http.response_bytes(200, body, headers=ids))
            return True

        self.stats.requests[(route, 200)] += 1
        self.stats.streams_active += 1
        self.stats.streams_peak = max(self.stats.streams_peak, self.stats.streams_active)
        try:
            return await self._stream(
                wire, pieces, finish, prompt_tokens, ttft, per_token, fault, writer, ids
            )
        finally:
            self.stats.streams_active -= 1

    async def _stream(
        self,
        wire: ChatWire | ResponsesWire | MessagesWire,
        pieces: list[str],
        finish: str,
        prompt_tokens: int,
        ttft: float,
        per_token: float,
        fault: str | None,
        writer: asyncio.StreamWriter,
        ids: dict[str, str],
    ) -> bool:
        loop = asyncio.get_running_loop()
        writer.write(http.stream_head(ids) + http.chunk(http.STREAM_COMMENT))
        await writer.drain()
        await asyncio.sleep(ttft)
        start = wire.start(prompt_tokens) if isinstance(wire, MessagesWire) else wire.start()
        writer.write(http.chunk(start))
        stop_at = len(pieces)
        if fault in ("reset", "sse_error"):
            stop_at = max(1, len(pieces) // 3)
        t0 = loop.time()
        sent = 0
        while sent < stop_at:
            elapsed = loop.time() - t0
            due = stop_at if per_token <= 0 else min(stop_at, 1 + int(elapsed / per_token))
            if due > sent:
                writer.write(http.chunk(wire.deltas(pieces[sent:due])))
                self.stats.completion_tokens += due - sent
                sent = due
                await writer.drain()
            if sent < stop_at:
                await asyncio.sleep(max(sent * per_token - (loop.time() - t0), self.min_tick))
        if fault == "reset":
            await writer.drain()
            http.reset_connection(writer)
            return False
        if fault == "sse_error":
            writer.write(http.chunk(wire.error_event()) + http.LAST_CHUNK)
            return True
        if isinstance(wire, ResponsesWire):
            tail = wire.finish(finish, prompt_tokens, len(pieces), "".join(pieces))
        else:
            tail = wire.finish(finish, prompt_tokens, len(pieces))
        writer.write(http.chunk(tail) + http.LAST_CHUNK)
        await writer.drain()
        return True


@contextlib.contextmanager
def running_sim(**kwargs: object) -> Iterator[SimServer]:
    """Run a :class:`SimServer` in a background thread with its own event loop.

    For synchronous callers (tests using the sync SDK clients, the CLI, benchmarks).
    """
    server = SimServer(**kwargs)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # report bind errors to the caller's thread
            failure.append(exc)
            started.set()
            loop.close()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(server.stop())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    thread = threading.Thread(target=run, name="eloledger-sim", daemon=True)
    thread.start()
    started.wait()
    if failure:
        thread.join()
        raise failure[0]
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def _gemini_verb(request: http.Request) -> tuple[str, str] | None:
    """(model, verb) of a Gemini ``POST /v1beta/models/<model>:<verb>``, else None."""
    if request.method != "POST" or not request.path.startswith(GEMINI_PREFIX):
        return None
    model, sep, verb = request.path[len(GEMINI_PREFIX) :].partition(":")
    return (model, verb) if sep and model and verb in GEMINI_VERBS else None
