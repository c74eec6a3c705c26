"""The metering proxy: every model call of an agent session passes here, on the host.

One :class:`Meter` per run. Each session it opens gets its own listening unix socket (bound
into that session's sandbox, where :mod:`.relay` hands it the sandbox's own 127.0.0.1 port:
:mod:`.door`) and its own random token. The CLI is configured with that token as its "key"; the meter
accepts a request only on the session's socket and only with the session's token, puts the
real key in its place (in the same header form the CLI used) and forwards to the profile's
gateway (a plain asyncio protocol, :mod:`.upstream`; httpx2 where a proxy is configured). The
answer is relayed as it arrives (:mod:`.exchange`), and a :class:`~.tap.Tap` reads its usage
and answering model on the way: one :class:`~.call.MeteredCall` per model call, from the
gateway's bytes, never from the agent. Requests are read (:mod:`.agent_side`) and answers
relayed inside the event loop's callbacks: a call costs the meter no task of its own.

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
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import httpx2

from eloledger.agents.usage import CallUsage
from eloledger.meter.agent_side import AgentConnection
from eloledger.meter.call import MeteredCall
from eloledger.meter.door import Door
from eloledger.meter.exchange import HOP, Exchange, json_answer
from eloledger.meter.tap import GEMINI, wire_of
from eloledger.meter.upstream import Gateway, Source, direct_ok, send_through_httpx
from eloledger.sim.http import Request

_CREDENTIALS = ("authorization", "x-api-key", "x-goog-api-key")
# What an agent CLI asks of a gateway; anything else (a LiteLLM /key/generate, files, batches)
# is answered 404 here and never sent with the real key.
_PATHS = frozenset(
    {"/", "/v1/messages", "/v1/messages/count_tokens", "/v1/responses", "/v1/chat/completions",
     "/v1/models"}
)  # fmt: skip
_PREFIXES = ("/v1/models/", "/v1beta/models")


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
    _agents: weakref.WeakSet[AgentConnection] = field(default_factory=weakref.WeakSet)
    _exchanges: set[Exchange] = field(default_factory=set)  # answers on their way

    def add(self, call: MeteredCall) -> None:
        """Record one call, numbered in the order the calls ended."""
        call.index = len(self.calls) + 1
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)

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

        def connection() -> AgentConnection:
            agent = AgentConnection(lambda conn, req: self._serve(session, conn, req), _bad_request)
            session._agents.add(agent)
            return agent

        if tcp:
            loop = asyncio.get_running_loop()
            session._server = await loop.create_server(connection, "127.0.0.1", 0)
            session.port = session._server.sockets[0].getsockname()[1]
        else:
            session._door = Door(self._dir / f"s{self._count}.sock", connection)
            session._door.start()
            session.socket_path = session._door.path
        self.sessions.append(session)
        return session

    async def close_session(self, session: MeterSession) -> None:
        """Stop listening and end the session's connections (its calls stay recorded)."""
        if session._server is not None:
            session._server.close()
            session._server = None
        tasks: set[asyncio.Task[None]] = set()
        if session._door is not None:
            tasks |= session._door.tasks
            session._door.close()
            session._door = None
        for exchange in list(session._exchanges):
            exchange.cancel()
        session._exchanges.clear()
        for agent in list(session._agents):
            agent.close()
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

    # ------------------------------------------------------------------------------ one request
    def _serve(self, session: MeterSession, agent: AgentConnection, req: Request) -> None:
        """Answer one request at once, or forward it; the agent side waits until it is done."""
        if req.headers.get("upgrade"):  # Codex's WebSocket try: no, at once (it falls back)
            agent.write(json_answer(404, {"error": {"message": "no websocket here"}}, close=True))
            agent.done(False)
            return
        if not _allowed(req.path):
            message = f"the meter forwards model calls only, not {req.method} {req.path[:80]}"
            agent.write(json_answer(404, {"error": {"message": message}},
                                    close=not req.keep_alive))  # fmt: skip
            agent.done(req.keep_alive)
            return
        target = _with_key(req, session.token, session.upstream.api_key)
        if target is None:
            session.refused += 1
            agent.write(json_answer(401, _refusal(req.path), close=not req.keep_alive))
            agent.done(req.keep_alive)
            return
        headers = _forward_headers(req, session.upstream)
        wire = wire_of(req.path) if req.method == "POST" else None
        exchange = Exchange(req, wire, agent, session.add, session._exchanges.discard)
        session._exchanges.add(exchange)
        exchange.source = self._send(session.upstream.root_url, req, target, headers, exchange)

    def _send(
        self, root: str, req: Request, target: str, headers: list[tuple[str, str]],
        exchange: Exchange,
    ) -> Source:  # fmt: skip
        """Forward on a plain protocol where nothing stands between (:mod:`.upstream`), else
        through httpx2 (a configured proxy)."""
        gateway = self._gateways.get(root)
        if gateway is None and root not in self._gateways:
            gateway = Gateway(root, self.timeout_s) if direct_ok(root) else None
            self._gateways[root] = gateway
        if gateway is not None:
            return gateway.send(req.method, target, headers, req.body, exchange)
        assert self._client is not None
        return send_through_httpx(self._client, root + target, req.method, headers, req.body,
                                  exchange)  # fmt: skip


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
        if name in HOP:
            continue
        if name == "authorization":
            value = f"Bearer {key}"
        elif name in ("x-api-key", "x-goog-api-key"):
            value = key
        out.append((name, value))
    out.append(("accept-encoding", "identity"))  # the tap reads the bytes as they come
    out.extend(upstream.headers)
    return out


def _bad_request() -> bytes:
    return json_answer(400, {"error": {"message": "bad request"}}, close=True)


def _refusal(path: str) -> dict[str, object]:
    """A 401 in the shape the calling client reads (docs/observed/clients.md, error bodies)."""
    message = "this meter accepts only its session's token"
    if path.endswith("/messages") or path.endswith("/count_tokens"):
        return {"type": "error", "error": {"type": "authentication_error", "message": message}}
    if wire_of(path) == GEMINI or path.startswith("/v1beta"):
        return {"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED"}}
    return {"error": {"message": message, "type": "invalid_request_error",
                      "code": "invalid_api_key"}}  # fmt: skip
