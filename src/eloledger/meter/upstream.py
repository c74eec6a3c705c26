"""The meter's leg to the gateway: HTTP/1.1 on a plain asyncio protocol, kept-alive connections.

Why not httpx2 here: the meter forwards bytes it does not need to model, and a general client's
per-request and per-chunk machinery cost as much CPU as the agent's own client (bench/
bench_meter.py). Why callbacks and not awaits: the answer's head and each piece of its body are
handed to the meter's :class:`Sink` inside the event loop's read callback, with no task
wake-up, future or timer per call or per piece; those were most of the meter's CPU per call.
The request is written as received (credentials already replaced). This leg is used only where
nothing stands between the meter and the gateway: an ``http``/``https`` URL with no proxy
configured for it (:func:`direct_ok`); everything else goes through httpx2
(:func:`send_through_httpx`), which honours the proxy settings.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import urllib.request
from typing import Protocol
from urllib.parse import urlsplit

import httpx2

_MAX_HEAD = 64 * 1024
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_MAX_LINE = 4096  # a chunk-size or trailer line
_IDLE = 8  # kept-alive connections per gateway
_READ = 64 * 1024  # bytes per read at most
# What the gateway's leg hands a sink when the gateway fails, hangs or sends what is not HTTP.
UPSTREAM_ERRORS = (
    httpx2.HTTPError, OSError, TimeoutError, ValueError, asyncio.IncompleteReadError,
)  # fmt: skip


class Source(Protocol):
    """Where an answer's bytes come from: reading pauses while the agent's side is full."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def close(self) -> None: ...


class Sink(Protocol):
    """Takes one answer: ``head`` once, then ``piece`` for each part of the body, ``last`` on
    the call that ends it cleanly (its data may be empty, so the last piece and the end go out
    in one write); or ``failed`` instead, at any point. A sink may raise ConnectionError from
    ``piece`` to end the answer (a body over a cap). What to pause is what the send returned."""

    def head(self, status: int, headers: list[tuple[str, str]]) -> None: ...

    def piece(self, data: bytes, last: bool) -> None: ...

    def failed(self, exc: BaseException) -> None: ...


def direct_ok(url: str) -> bool:
    """Whether ``url`` is reached without a proxy (as httpx2 would decide from the env)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies and "all" not in proxies:
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


class _Paused:
    """The pause switch of an answer read by httpx2 (an async iterator, not a protocol)."""

    def __init__(self, task: asyncio.Task[None] | None = None) -> None:
        self.go = asyncio.Event()
        self.go.set()
        self.task = task

    def pause(self) -> None:
        self.go.clear()

    def resume(self) -> None:
        self.go.set()

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()


def send_through_httpx(
    client: httpx2.AsyncClient, url: str, method: str, headers: list[tuple[str, str]],
    body: bytes, sink: Sink,
) -> _Paused:
    """Send one request through httpx2 (a configured proxy) and feed its answer to ``sink``."""
    switch = _Paused()

    async def run() -> None:
        try:
            request = client.build_request(method, url, headers=headers, content=body)
            response = await client.send(request, stream=True)
        except UPSTREAM_ERRORS as exc:
            sink.failed(exc)
            return
        try:
            items = [(k.lower(), v) for k, v in response.headers.multi_items()]
            sink.head(response.status_code, items)
            sink.piece(b"", False)
            async for data in response.aiter_bytes():
                sink.piece(data, False)
                await switch.go.wait()
            sink.piece(b"", True)
        except UPSTREAM_ERRORS as exc:
            sink.failed(exc)
        finally:
            await response.aclose()

    switch.task = asyncio.get_running_loop().create_task(run())
    return switch


class Gateway:
    """Connections to one gateway root (scheme, host, port, path prefix)."""

    def __init__(self, root_url: str, timeout_s: float) -> None:
        parts = urlsplit(root_url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        self.authority = parts.netloc.rsplit("@", 1)[-1]
        self.timeout_s = timeout_s
        self._idle: list[_Connection] = []
        self._ssl = ssl.create_default_context() if self.tls else None
        self._opening: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        for task in list(self._opening):
            task.cancel()
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    def send(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, sink: Sink
    ) -> Source:
        """Send one request at once on a kept-alive connection, else on a new one; the answer
        goes to ``sink``. A kept-alive connection the gateway closed meanwhile is replaced once
        (nothing of the answer had come). Returns the call's :class:`Source`: to pause reading
        it while the agent's side is full, or to close it."""
        head = [f"{method} {self.prefix}{target} HTTP/1.1", f"host: {self.authority}"]
        head += [f"{k}: {v}" for k, v in headers]
        head.append(f"content-length: {len(body)}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        call = _Call(self, method, data, sink)
        conn = self._kept()
        if conn is not None:
            call.begin(conn, reused=True)
        else:
            call.open()
        return call

    def keep(self, conn: _Connection) -> None:
        """Keep a connection for the next call if its last answer ended cleanly, else close it."""
        if conn.reusable and len(self._idle) < _IDLE:
            self._idle.append(conn)
        else:
            conn.close()

    def _kept(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable:
                return conn
            conn.close()
        return None

    async def connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, conn = await asyncio.wait_for(
            loop.create_connection(
                lambda: _Connection(self, self.timeout_s), self.host, self.port, ssl=self._ssl,
                server_hostname=self.host if self.tls else None,
            ),
            min(30.0, self.timeout_s),
        )  # fmt: skip
        return conn


class _Call:
    """One request on its way: the connection it went out on, and the one retry it is owed
    when a kept-alive connection turns out closed before any answer came."""

    def __init__(self, gateway: Gateway, method: str, data: bytes, sink: Sink) -> None:
        self.gateway = gateway
        self.method = method
        self.data = data
        self.sink = sink
        self.conn: _Connection | None = None
        self.task: asyncio.Task[None] | None = None
        self.closed = False

    def begin(self, conn: _Connection, *, reused: bool) -> None:
        self.conn = conn
        conn.begin(self.method, self.data, self, reused=reused)

    def open(self) -> None:
        """A new connection first (the only wait on this leg), then the request."""

        async def connect() -> None:
            try:
                conn = await self.gateway.connect()
            except UPSTREAM_ERRORS as exc:
                self.sink.failed(exc)
                return
            if self.closed:
                conn.close()
            else:
                self.begin(conn, reused=False)

        self.task = asyncio.get_running_loop().create_task(connect())
        self.gateway._opening.add(self.task)
        self.task.add_done_callback(self.gateway._opening.discard)

    def retry(self) -> None:
        """The kept-alive connection was closed by the gateway before it answered."""
        self.conn = None
        if not self.closed:
            self.open()

    # the Source the sink gets: reading of whichever connection carries the answer
    def pause(self) -> None:
        if self.conn is not None:
            self.conn.pause()

    def resume(self) -> None:
        if self.conn is not None:
            self.conn.resume()

    def close(self) -> None:
        self.closed = True
        if self.task is not None:
            self.task.cancel()
        if self.conn is not None:
            self.conn.close()


class _Connection(asyncio.BufferedProtocol):
    """One connection to the gateway, one answer at a time: the head is parsed and the body
    unframed as bytes arrive, and handed to the call's sink. A watchdog, one timer per answer,
    ends an answer that sent nothing for the timeout (reading paused for a slow agent does not
    count). Bytes are read into one buffer of its own: a plain protocol's transport allocates
    256 KiB per read, which cost more than all the rest of a read here (bench/bench_meter.py)."""

    def __init__(self, gateway: Gateway, timeout_s: float) -> None:
        self.gateway = gateway
        self.timeout_s = timeout_s
        self.transport: asyncio.Transport | None = None
        self.reusable = False
        self.paused = False
        self._loop = asyncio.get_running_loop()
        self._call: _Call | None = None  # the answer being read; None between answers
        self._reused = False  # this answer's request went out on a kept-alive connection
        self._headed = False  # its head has been read
        self._pending = b""  # head bytes not yet ended by a blank line
        self._frames: Unchunk | None = None  # a chunked body
        self._left: int | None = None  # a body of known length: bytes still due
        self._last = 0.0  # when the gateway last sent something
        self._timer: asyncio.TimerHandle | None = None
        self._method = ""
        self._buffer = memoryview(bytearray(_READ))

    # ----------------------------------------------------------------- what the gateway leg calls
    def begin(self, method: str, data: bytes, call: _Call, *, reused: bool) -> None:
        """Write a request; its answer goes to the call's sink as it comes."""
        self._method, self._call, self._reused, self._headed = method, call, reused, False
        self._pending, self._frames, self._left, self.reusable = b"", None, None, False
        self.paused = False
        self._last = self._loop.time()
        self._arm()
        if self.transport is None or self.transport.is_closing():
            self._fail(ConnectionError("the gateway closed the connection"))
            return
        self.transport.write(data)

    def pause(self) -> None:
        if self.transport is not None and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.transport is not None and self.paused:
            self.paused = False
            self._last = self._loop.time()
            if not self.transport.is_closing():
                self.transport.resume_reading()

    def close(self) -> None:
        self.reusable = False
        self._call = None
        self._disarm()
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------------------- asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream transport (uvloop's too)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        self._received(bytes(self._buffer[:nbytes]))

    def _received(self, data: bytes) -> None:
        call = self._call
        if call is None:  # bytes nobody asked for
            self.close()
            return
        self._last = self._loop.time()
        try:
            if not self._headed:
                data = self._read_head(data, call)
            if data and self._call is call:
                self._read_body(data, call)
        except Exception as exc:  # noqa: BLE001 - a bad answer or a sink's refusal ends it
            self._fail(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        self._disarm()
        call = self._call
        if call is None:
            return
        if not self._headed:
            self._fail(ConnectionError("the gateway closed the connection"))
        elif self._frames is None and self._left is None:  # the body ends with the connection
            self._ended(b"", b"", call)
        else:
            self._fail(ConnectionError("the gateway ended the answer early"))

    # --------------------------------------------------------------------------- one answer
    def _read_head(self, data: bytes, call: _Call) -> bytes:
        """Bytes past the head (empty while the head is incomplete)."""
        buf = self._pending + data if self._pending else data
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > _MAX_HEAD:
                    raise ValueError("the gateway's answer head is too large")
                self._pending = buf
                return b""
            status, headers = _parse_head(buf[:end])
            buf = buf[end + 4 :]
            if status != 100:  # a 100 Continue is followed by the real answer
                break
        self._pending = b""
        fields = dict(headers)
        chunked = "chunked" in fields.get("transfer-encoding", "").lower()
        length = None if chunked or "content-length" not in fields else _length(fields)
        self.reusable = "close" not in fields.get("connection", "").lower()
        self._headed = True  # framing read first: a bad one fails before the head is handed on
        call.sink.head(status, headers)
        if self._method == "HEAD" or status in (204, 304) or status < 200 or length == 0:
            self._ended(b"", buf, call)
            return b""
        if chunked:
            self._frames = Unchunk()
        elif length is not None:
            self._left = length
        else:  # the body ends when the connection does
            self.reusable = False
        return buf

    def _read_body(self, data: bytes, call: _Call) -> None:
        rest = b""
        ended = False
        if self._frames is not None:
            payload = self._frames.feed(data)
            if self._frames.done:
                ended, rest = True, self._frames.rest
        elif self._left is not None:
            payload, rest = data[: self._left], data[self._left :]
            self._left -= len(payload)
            ended = self._left == 0
        else:
            payload = data
        if ended:
            self._ended(payload, rest, call)
        elif payload:
            call.sink.piece(payload, False)

    def _ended(self, payload: bytes, rest: bytes, call: _Call) -> None:
        """The body ended: the connection goes back to the gateway first (the sink may send the
        agent's next request on it at once), then the last piece to the sink. Bytes past the
        end leave nothing safe to reuse."""
        self._call = None
        self._disarm()
        if rest:
            self.reusable = False
        self.gateway.keep(self)
        try:
            call.sink.piece(payload, True)
        except Exception as exc:  # noqa: BLE001 - the sink's refusal of its last piece
            call.sink.failed(exc)

    def _fail(self, exc: BaseException) -> None:
        call, headed, reused = self._call, self._headed, self._reused
        self.close()
        if call is None:
            return
        if reused and not headed and isinstance(exc, ConnectionError):
            call.retry()  # a kept-alive connection the gateway had closed: once, on a new one
        else:
            call.sink.failed(exc)

    def _arm(self) -> None:
        self._disarm()
        self._timer = self._loop.call_at(self._last + self.timeout_s, self._watch)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _watch(self) -> None:
        self._timer = None
        if self._call is None:
            return
        if self.paused:  # waiting on the agent, not on the gateway
            self._last = self._loop.time()
        elif self._loop.time() + 0.01 >= self._last + self.timeout_s:  # timers may fire early
            self._fail(TimeoutError(f"the gateway sent nothing for {self.timeout_s:g} s"))
            return
        self._arm()


class Unchunk:
    """A chunked body's payload from its raw bytes, fed as they arrive (RFC 9112, 7.1)."""

    def __init__(self) -> None:
        self.done = False
        self.rest = b""  # unread bytes (after the end: anything the gateway sent past it)
        self._left = 0  # payload bytes still due in the current chunk
        self._crlf = False  # the CRLF that ends a chunk's data is due
        self._trailer = False  # past the last chunk: trailer lines until an empty one

    def feed(self, data: bytes) -> bytes:
        buf = self.rest + data if self.rest else data
        out: list[bytes] = []
        pos, end = 0, len(buf)
        while pos < end and not self.done:
            if self._left:
                take = min(self._left, end - pos)
                out.append(buf[pos : pos + take])
                pos += take
                self._left -= take
                self._crlf = not self._left
                continue
            if self._crlf:
                if end - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise ValueError("a chunk does not end with CRLF")
                pos += 2
                self._crlf = False
                continue
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                if end - pos > _MAX_LINE:
                    raise ValueError("a chunk size or trailer line is too long")
                break
            line = buf[pos:eol]
            pos = eol + 2
            if self._trailer:
                self.done = not line
                continue
            size = _chunk_size(line)
            stop = pos + size
            if size and buf[stop : stop + 2] == b"\r\n":  # the whole chunk is here: one step
                out.append(buf[pos:stop])
                pos = stop + 2
            else:
                self._left, self._trailer = size, size == 0
        self.rest = buf[pos:]
        return b"".join(out) if len(out) != 1 else out[0]


def _chunk_size(line: bytes) -> int:
    """The size on a chunk's first line (hex, maybe followed by extensions after ``;``)."""
    if not _HEX.fullmatch(line):
        line = line.split(b";", 1)[0].strip()
        if not _HEX.fullmatch(line):
            raise ValueError("a chunk size is not a hex number")
    return int(line, 16)


def _parse_head(raw: bytes) -> tuple[int, list[tuple[str, str]]]:
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ValueError("the gateway's answer does not start with an HTTP status line")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip().lower(), value.strip()))
    return int(parts[1]), headers


def _length(fields: dict[str, str]) -> int:
    value = fields["content-length"]
    if not value.isdigit():  # int() would take "-5", " 5" or "5_0"
        raise ValueError("the gateway's content-length is not a number")
    return int(value)
