"""The metering proxy: every model call of an agent session passes here, on the host.

One :class:`Meter` per run. Each session it opens gets its own listening unix socket (bound
into that session's sandbox, where :mod:`.relay` hands it the sandbox's own 127.0.0.1 port:
:mod:`.door`) and its own random token. The CLI is configured with that token as its "key"; the meter
accepts a request only on the session's socket and only with the session's token, puts the
real key in its place (in the same header form the CLI used) and forwards to the profile's
gateway (plain asyncio streams, :mod:`.upstream`; httpx2 where a proxy is configured). The
answer is relayed as it arrives, and a
:class:`~.tap.Tap` reads its usage and answering model on the way: one
:class:`~.call.MeteredCall` per model call, from the gateway's bytes, never from the agent.

The real key therefore never enters the sandbox (not in its environment, files or argv), and a
token is worth nothing anywhere but on its own session's socket, where every call it makes is
counted against that session.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import httpx2
import orjson

from eloledger.agents.usage import CallUsage
from eloledger.gateway.error_kinds import request_id
from eloledger.gateway.wire import answered_model
from eloledger.meter.call import MeteredCall
from eloledger.meter.door import Door
from eloledger.meter.tap import GEMINI, Tap, asked_model, wire_of
from eloledger.meter.upstream import Answer, Gateway, IteratedAnswer, direct_ok
from eloledger.sim.http import LAST_CHUNK, BadRequest, Request, chunk, read_request

# Never forwarded either way: connection-level headers, and what the meter rewrites itself.
_HOP = frozenset(
    {"host", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
     "trailer", "transfer-encoding", "upgrade", "content-length", "content-encoding",
     "accept-encoding"}
)  # fmt: skip
_CREDENTIALS = ("authorization", "x-api-key", "x-goog-api-key")
# What an agent CLI asks of a gateway; anything else (a LiteLLM /key/generate, files, batches)
# is answered 404 here and never sent with the real key.
_PATHS = frozenset(
    {"/", "/v1/messages", "/v1/messages/count_tokens", "/v1/responses", "/v1/chat/completions",
     "/v1/models"}
)  # fmt: skip
_PREFIXES = ("/v1/models/", "/v1beta/models")
_MAX_WHOLE_BODY = 64 << 20
# What the gateway's leg raises when the gateway fails, hangs or sends what is not HTTP.
_UPSTREAM_ERRORS = (
    httpx2.HTTPError, OSError, TimeoutError, ValueError, asyncio.IncompleteReadError,
    asyncio.LimitOverrunError,
)  # fmt: skip  # a non-streamed answer is relayed whole; bigger is refused


@dataclass(frozen=True)
class Upstream:
    """Where a session's calls go: the gateway root its request paths are appended to."""

    root_url: str
    api_key: str
    headers: tuple[tuple[str, str], ...] = ()  # added to every forwarded request


# a unix socket's path has room for 107 bytes (sun_path): a deep $TMPDIR (a test's, a CI's)
# would not fit "<dir>/elm-XXXXXXXX/s12.sock", so the folder goes where it is short
_SOCKET_ROOM = 107 - len("/elm-xxxxxxxx/s99999.sock")


def _socket_parent() -> str:
    """The temporary folder if its path leaves room for a socket name, else /tmp."""
    tmp = tempfile.gettempdir()
    return tmp if len(os.fsencode(tmp)) <= _SOCKET_ROOM else "/tmp"


@dataclass
class MeterSession:
    """One agent session's way out: its token, its socket (or TCP port), its calls."""

    upstream: Upstream
    token: str
    socket_path: Path | None = None
    port: int | None = None  # only without a sandbox (``tcp=True``): the meter's own port
    calls: list[MeteredCall] = field(default_factory=list)
    refused: int = 0  # requests without this session's token
    on_call: Callable[[MeteredCall], None] | None = None
    _server: asyncio.Server | None = None  # the TCP port (no sandbox)
    _door: Door | None = None  # the unix socket, and the sandbox's port handed over on it
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def usage(self) -> CallUsage:
        total = CallUsage()
        for call in self.calls:
            total = total + call.counted
        return total


class Meter:
    """The run's metering proxy (start: the first :meth:`open`; stop: :meth:`aclose`)."""

    def __init__(self, timeout_s: float = 600.0) -> None:
        self.timeout_s = timeout_s
        self._dir: Path | None = None
        self._client: httpx2.AsyncClient | None = None
        self._count = 0
        self._gateways: dict[str, Gateway | None] = {}  # None: through httpx2 (a proxy)
        self.sessions: list[MeterSession] = []

    async def open(
        self,
        upstream: Upstream,
        *,
        tcp: bool = False,
        on_call: Callable[[MeteredCall], None] | None = None,
    ) -> MeterSession:
        """A new session: a fresh token and its own listener (a unix socket; a 127.0.0.1
        port with ``tcp``, for a CLI that runs without a sandbox)."""
        if self._client is None:
            timeout = httpx2.Timeout(self.timeout_s, connect=min(30.0, self.timeout_s))
            limits = httpx2.Limits(max_connections=512, max_keepalive_connections=64)
            self._client = httpx2.AsyncClient(timeout=timeout, limits=limits)
            self._dir = Path(tempfile.mkdtemp(prefix="elm-", dir=_socket_parent()))  # 0700
        assert self._dir is not None
        self._count += 1
        session = MeterSession(upstream, "eloledger-session-" + secrets.token_urlsafe(24))
        session.on_call = on_call

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            session._tasks.add(task)
            try:
                await self._connection(session, reader, writer)
            finally:
                session._tasks.discard(task)

        if tcp:
            session._server = await asyncio.start_server(handle, "127.0.0.1", 0)
            session.port = session._server.sockets[0].getsockname()[1]
        else:
            session._door = Door(self._dir / f"s{self._count}.sock", handle)
            session._door.start()
            session.socket_path = session._door.path
        self.sessions.append(session)
        return session

    async def close_session(self, session: MeterSession) -> None:
        """Stop listening and end the session's connections (its calls stay recorded)."""
        if session._server is not None:
            session._server.close()
            session._server = None
        tasks = set(session._tasks)
        if session._door is not None:
            tasks |= session._door.tasks
            session._door.close()
            session._door = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    async def aclose(self) -> None:
        for session in self.sessions:
            await self.close_session(session)
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        for gateway in self._gateways.values():
            if gateway is not None:
                await gateway.close()
        self._gateways.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    # --------------------------------------------------------------------------- one connection
    async def _connection(
        self, session: MeterSession, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while True:
                try:
                    req = await read_request(reader)
                except (BadRequest, ValueError, asyncio.IncompleteReadError):
                    writer.write(_json(400, {"error": {"message": "bad request"}}, close=True))
                    break
                if req is None or not await self._serve(session, req, writer):
                    break
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve(
        self, session: MeterSession, req: Request, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection is to be closed."""
        if req.headers.get("upgrade"):  # Codex's WebSocket try: no, at once (it falls back)
            writer.write(_json(404, {"error": {"message": "no websocket here"}}, close=True))
            return False
        if not _allowed(req.path):
            message = f"the meter forwards model calls only, not {req.method} {req.path[:80]}"
            writer.write(_json(404, {"error": {"message": message}}, close=not req.keep_alive))
            await writer.drain()
            return req.keep_alive
        target = _with_key(req, session.token, session.upstream.api_key)
        if target is None:
            session.refused += 1
            writer.write(_json(401, _refusal(req.path), close=not req.keep_alive))
            await writer.drain()
            return req.keep_alive
        headers = _forward_headers(req, session.upstream)
        wire = wire_of(req.path) if req.method == "POST" else None
        started, wall = time.perf_counter(), time.time()
        try:
            answer = await self._send(session.upstream.root_url, req, target, headers)
        except _UPSTREAM_ERRORS as exc:
            message = f"the meter could not reach the gateway: {type(exc).__name__}"
            writer.write(_json(502, {"error": {"message": message}}, close=True))
            if wire is not None:
                self._record(session, req, wire, 502, False, Tap(wire, False), 0, started, None,
                             None, wall, message)  # fmt: skip
            return False
        try:
            return await self._relay(session, req, wire, answer, writer, started, wall)
        finally:
            await answer.aclose()

    async def _send(
        self, root: str, req: Request, target: str, headers: list[tuple[str, str]]
    ) -> Answer:
        """The gateway's answer (head read, body to come): on a plain protocol where nothing
        stands between (:mod:`.upstream`), else through httpx2."""
        gateway = self._gateways.get(root)
        if gateway is None and root not in self._gateways:
            gateway = Gateway(root, self.timeout_s) if direct_ok(root) else None
            self._gateways[root] = gateway
        if gateway is not None:
            return await gateway.send(req.method, target, headers, req.body)
        assert self._client is not None
        request = self._client.build_request(req.method, root + target, headers=headers,
                                             content=req.body)  # fmt: skip
        response = await self._client.send(request, stream=True)
        items = [(k.lower(), v) for k, v in response.headers.multi_items()]
        return IteratedAnswer(response.status_code, items, response.aiter_bytes(), response.aclose)

    async def _relay(
        self,
        session: MeterSession,
        req: Request,
        wire: str | None,
        response: Answer,
        writer: asyncio.StreamWriter,
        started: float,
        wall: float,
    ) -> bool:
        streamed = "text/event-stream" in response.header("content-type")
        tap = Tap(wire or "", streamed) if wire is not None else None
        keep = req.keep_alive
        head = [(k, v) for k, v in response.headers if k not in _HOP]
        sent = 0
        ttft: float | None = None
        gone = False  # the client hung up: the answer is still read to the end (it is billed)
        broken: str | None = None  # the gateway's answer ended before its end
        status = response.status
        body = b""
        high = writer.transport.get_write_buffer_limits()[1]
        parts: list[bytes] = []
        unsent_head = _head(status, head, chunked=True, keep=keep) if streamed else b""

        def relay(data: bytes, last: bool) -> bool:
            """One piece of a streamed answer: counted, then sent on at once. The head goes
            with the first call (what came alongside it) and the end with the last piece, one
            write each; a stream that broke off gets no end, so the agent sees it cut."""
            nonlocal ttft, sent, gone, unsent_head
            out, unsent_head = unsent_head, b""
            if data:
                if ttft is None:
                    ttft = (time.perf_counter() - started) * 1000.0
                sent += len(data)
                if tap is not None:
                    tap.feed(data)
                out += chunk(data)
            if last:
                out += LAST_CHUNK
            if gone or writer.transport.is_closing():
                gone = True
                return False
            writer.write(out)
            return writer.transport.get_write_buffer_size() > high

        def collect(data: bytes, last: bool) -> bool:
            nonlocal sent
            sent += len(data)
            if sent > _MAX_WHOLE_BODY:
                raise ConnectionError("answer too large")
            parts.append(data)
            return False

        async def drained() -> None:
            nonlocal gone
            try:
                await writer.drain()
            except ConnectionError:
                gone = True

        try:
            await response.pipe(relay if streamed else collect, drained)
            body = b"".join(parts)
        except _UPSTREAM_ERRORS as exc:
            broken = f"the gateway's answer broke off: {type(exc).__name__}"
        if not streamed and broken is None:
            sent = len(body)
            if tap is not None:
                tap.feed(body)
            writer.write(_head(status, [*head, ("content-length", str(sent))], chunked=False,
                               keep=keep) + body)  # fmt: skip
        elif not streamed:
            writer.write(_json(502, {"error": {"message": broken}}, close=True))
        if tap is not None:
            tap.finish()
            error = broken or tap.error
            if status >= 400:
                error = error or _error_of(status, body)
            fields = {str(k).lower(): v for k, v in dict(response.headers).items()}
            model = answered_model(fields, {"model": tap.model})  # the chat rows' one rule
            self._record(session, req, wire or "", status, streamed, tap, sent, started, ttft,
                         model, wall, error, request_id(fields))  # fmt: skip
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        return keep and not gone and broken is None

    def _record(
        self,
        session: MeterSession,
        req: Request,
        wire: str,
        status: int,
        streamed: bool,
        tap: Tap,
        received: int,
        started: float,
        ttft: float | None,
        model: str | None,
        wall: float,
        error: str | None,
        rid: str | None = None,
    ) -> None:
        usage, note = tap.usage, None
        if usage is None:
            note = "no_usage"
        elif usage.total_tokens == 0:
            usage, note = None, "zero_usage"  # all zeros is missing usage, not a free call
        estimate = CallUsage(
            prompt_tokens=max(1, len(req.body) // 4),
            completion_tokens=max(1, received // (16 if streamed else 4)),
        )
        call = MeteredCall(
            index=len(session.calls) + 1,
            wire=wire,
            path=req.path,
            model_asked=asked_model(wire, req.path, req.body),
            model_answered=model,
            http_status=status,
            streamed=streamed,
            usage=usage,
            usage_note=note if status < 400 and error is None else None,
            estimate=estimate,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            ttft_ms=ttft,
            error=error,
            request_id=rid,
            ts=wall,
        )
        session.calls.append(call)
        if session.on_call is not None:
            session.on_call(call)


def _allowed(path: str) -> bool:
    """A model-call path, with no dot segment or escape that could climb out of it."""
    if "%" in path or "\\" in path or any(p in (".", "..") for p in path.split("/")):
        return False
    return path in _PATHS or path.startswith(_PREFIXES)


def _with_key(req: Request, token: str, key: str) -> str | None:
    """The request target for the gateway, with the real key where the token was; None when
    the request does not carry this session's token (and only it) in every credential."""
    presented = [
        req.headers.get(name, "").removeprefix("Bearer ").strip()
        for name in _CREDENTIALS
        if req.headers.get(name)
    ]
    target = req.target
    if "?" in target:
        path, query = target.split("?", 1)
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name == "key" for name, _ in pairs):
            presented += [value for name, value in pairs if name == "key"]
            pairs = [(n, key if n == "key" else v) for n, v in pairs]
            target = path + "?" + urlencode(pairs)
    if not presented:
        return None
    if not all(hmac.compare_digest(p.encode(), token.encode()) for p in presented):
        return None
    return target


def _forward_headers(req: Request, upstream: Upstream) -> list[tuple[str, str]]:
    key = upstream.api_key
    out: list[tuple[str, str]] = []
    for name, value in req.headers.items():
        if name in _HOP:
            continue
        if name == "authorization":
            value = f"Bearer {key}"
        elif name in ("x-api-key", "x-goog-api-key"):
            value = key
        out.append((name, value))
    out.append(("accept-encoding", "identity"))  # the tap reads the bytes as they come
    out.extend(upstream.headers)
    return out


def _head(status: int, headers: list[tuple[str, str]], *, chunked: bool, keep: bool) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if chunked:
        lines.append("transfer-encoding: chunked")
    lines.append("connection: " + ("keep-alive" if keep else "close"))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _json(status: int, obj: object, *, close: bool) -> bytes:
    body = orjson.dumps(obj)
    head = [("content-type", "application/json"), ("content-length", str(len(body)))]
    return _head(status, head, chunked=False, keep=not close) + body


def _refusal(path: str) -> dict[str, object]:
    """A 401 in the shape the calling client reads (docs/observed/clients.md, error bodies)."""
    message = "this meter accepts only its session's token"
    if path.endswith("/messages") or path.endswith("/count_tokens"):
        return {"type": "error", "error": {"type": "authentication_error", "message": message}}
    if wire_of(path) == GEMINI or path.startswith("/v1beta"):
        return {"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED"}}
    return {"error": {"message": message, "type": "invalid_request_error",
                      "code": "invalid_api_key"}}  # fmt: skip


def _error_of(status: int, body: bytes) -> str:
    from eloledger.gateway.error_kinds import body_of, message_of

    return f"HTTP {status}: {message_of(body_of(body), body[:300].decode('utf-8', 'replace'))}"
