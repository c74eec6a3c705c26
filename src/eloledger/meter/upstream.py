"""The meter's leg to the gateway: HTTP/1.1 on a plain asyncio protocol, kept-alive connections.

Why not httpx2 here: the meter forwards bytes it does not need to model, and a general client's
per-request and per-chunk machinery cost as much CPU as the agent's own client (bench/
bench_meter.py). Why a protocol and not asyncio streams: each piece of an answer is unframed and
handed to the meter's sink inside the event loop's read callback, with no task wake-up, future or
timer per piece; those were most of the meter's CPU on a streamed call. The request is written as
received (credentials already replaced). This leg is used only where nothing stands between the
meter and the gateway: an ``http``/``https`` URL with no proxy configured for it
(:func:`direct_ok`); everything else goes through httpx2 (:class:`IteratedAnswer`), which honours
the proxy settings.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

_MAX_HEAD = 64 * 1024
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_MAX_LINE = 4096  # a chunk-size or trailer line
_IDLE = 8  # kept-alive connections per gateway
_READ = 64 * 1024  # bytes per read at most

# Takes the pieces of an answer's body as they arrive: ``sink(data, last)``. The first call comes
# at once, with what arrived together with the head (maybe nothing); ``last`` is True on the call
# that ends the body cleanly (its data may be empty), so the last piece and the end can go out in
# one write. Returns True when the agent's side is full and reading is to pause until
# ``drained`` (the second argument of ``pipe``) returns; may raise ConnectionError to end the
# answer (a body over a cap).
Sink = Callable[[bytes, bool], bool]
Drained = Callable[[], Awaitable[None]]


def direct_ok(url: str) -> bool:
    """Whether ``url`` is reached without a proxy (as httpx2 would decide from the env)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies and "all" not in proxies:
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


class Answer:
    """A gateway's answer: its head, read; its body, handed piece by piece to a sink."""

    def __init__(self, status: int, headers: list[tuple[str, str]]) -> None:
        self.status = status
        self.headers = headers  # as sent (names lower-cased)

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k == name), "")

    async def pipe(self, sink: Sink, drained: Drained) -> None:
        """Every piece of the body to ``sink``, until the body ends; raises if it broke off."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release the connection (kept for the next call only when the body ended cleanly)."""


class IteratedAnswer(Answer):
    """An answer whose body is an async iterator (httpx2's, through a proxy)."""

    def __init__(
        self,
        status: int,
        headers: list[tuple[str, str]],
        body: AsyncIterator[bytes],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(status, headers)
        self._body = body
        self._close = close

    async def pipe(self, sink: Sink, drained: Drained) -> None:
        sink(b"", False)
        async for data in self._body:
            if sink(data, False):
                await drained()
        sink(b"", True)

    async def aclose(self) -> None:
        await self._close()


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

    async def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    async def send(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Answer:
        """Send one request and read the answer's head; a kept-alive connection the gateway
        closed meanwhile is replaced once (nothing of the answer had come)."""
        head = [f"{method} {self.prefix}{target} HTTP/1.1", f"host: {self.authority}"]
        head += [f"{k}: {v}" for k, v in headers]
        head.append(f"content-length: {len(body)}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        for attempt in (0, 1):
            conn = self._kept() if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = await self._open()
            try:
                status, answer_headers = await conn.begin(method, data)
            except (ConnectionError, OSError):
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            return _ConnectionAnswer(status, answer_headers, conn, self)
        raise ConnectionError("the gateway closed the connection")  # pragma: no cover

    def keep(self, conn: _Connection) -> None:
        """Keep a connection for the next call if its last answer ended cleanly, else close it."""
        if conn.finished and conn.reusable and len(self._idle) < _IDLE:
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

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, conn = await asyncio.wait_for(
            loop.create_connection(
                lambda: _Connection(self.timeout_s), self.host, self.port, ssl=self._ssl,
                server_hostname=self.host if self.tls else None,
            ),
            min(30.0, self.timeout_s),
        )  # fmt: skip
        return conn


class _ConnectionAnswer(Answer):
    """An answer read by a :class:`_Connection` of a :class:`Gateway`."""

    def __init__(
        self, status: int, headers: list[tuple[str, str]], conn: _Connection, gateway: Gateway
    ) -> None:
        super().__init__(status, headers)
        self._conn = conn
        self._gateway = gateway
        self._released = False

    async def pipe(self, sink: Sink, drained: Drained) -> None:
        conn = self._conn
        resuming: set[asyncio.Task[None]] = set()

        async def resume_when_drained() -> None:
            await drained()
            conn.resume()

        def push(data: bytes, last: bool) -> None:
            if sink(data, last) and not conn.paused:
                conn.pause()
                task = asyncio.get_running_loop().create_task(resume_when_drained())
                resuming.add(task)
                task.add_done_callback(resuming.discard)

        try:
            await conn.attach(push)
        finally:
            for task in resuming:
                task.cancel()

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._gateway.keep(self._conn)


class _Connection(asyncio.BufferedProtocol):
    """One connection to the gateway, one answer at a time: the head is parsed and the body
    unframed as bytes arrive. A watchdog, one timer per answer, ends an answer that sent nothing
    for the timeout (reading paused for a slow agent does not count). Bytes are read into one
    buffer of its own: a plain protocol's transport allocates 256 KiB per read, which cost more
    than all the rest of a read here (bench/bench_meter.py)."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.transport: asyncio.Transport | None = None
        self.reusable = False
        self.paused = False
        self._loop = asyncio.get_running_loop()
        self._head: asyncio.Future[tuple[int, list[tuple[str, str]]]] | None = None
        self._done: asyncio.Future[None] | None = None
        self._pending = b""  # head bytes not yet ended by a blank line
        self._push: Callable[[bytes, bool], None] | None = None
        self._early: list[bytes] = []  # body pieces before a sink was attached
        self._early_end = False  # ... and whether the body ended before it was
        self._frames: Unchunk | None = None  # a chunked body
        self._left: int | None = None  # a body of known length: bytes still due
        self._last = 0.0  # when the gateway last sent something
        self._timer: asyncio.TimerHandle | None = None
        self._method = ""
        self._buffer = memoryview(bytearray(_READ))

    # ----------------------------------------------------------------- what the gateway leg calls
    @property
    def finished(self) -> bool:
        """The last answer's body ended cleanly (not cut short, failed or abandoned)."""
        done = self._done
        return done is not None and done.done() and not done.cancelled() and not done.exception()

    def begin(self, method: str, data: bytes) -> asyncio.Future[tuple[int, list[tuple[str, str]]]]:
        """Write a request; the answer's status and headers, when they have come."""
        assert self.transport is not None
        self._method = method
        self._head = self._loop.create_future()
        self._done = self._loop.create_future()
        self._pending, self._push, self._early, self._early_end = b"", None, [], False
        self._frames, self._left, self.reusable, self.paused = None, None, False, False
        self._last = self._loop.time()
        self._arm()
        self.transport.write(data)
        return self._head

    def attach(self, push: Callable[[bytes, bool], None]) -> asyncio.Future[None]:
        """Hand the body to ``push`` from now on, starting at once with what has come; done
        when the body has ended."""
        assert self._done is not None
        early, self._early, self._push = b"".join(self._early), [], push
        try:
            push(early, self._early_end)
        except Exception as exc:  # noqa: BLE001 - the sink's refusal ends the answer
            self._fail(exc)
        return self._done

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
        if self._done is None or self._done.done():  # bytes nobody asked for
            self.close()
            return
        self._last = self._loop.time()
        try:
            assert self._head is not None
            if not self._head.done():
                data = self._read_head(data)
            if data and not self._done.done():
                self._read_body(data)
        except Exception as exc:  # noqa: BLE001 - a bad answer or a sink's refusal ends it
            self._fail(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        if self._head is not None and not self._head.done():
            self._fail(ConnectionError("the gateway closed the connection"))
        elif self._done is not None and not self._done.done():
            if self._frames is None and self._left is None:  # the body ends with the connection
                self._deliver(b"", True)
                self._end(b"")
            else:
                self._fail(ConnectionError("the gateway ended the answer early"))
        self._disarm()

    # --------------------------------------------------------------------------- one answer
    def _read_head(self, data: bytes) -> bytes:
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
        assert self._head is not None
        self._head.set_result((status, headers))  # framing read first: a bad one fails the head
        if self._method == "HEAD" or status in (204, 304) or status < 200 or length == 0:
            self._deliver(b"", True)
            self._end(buf)
            return b""
        if chunked:
            self._frames = Unchunk()
        elif length is not None:
            self._left = length
        else:  # the body ends when the connection does
            self.reusable = False
        return buf

    def _read_body(self, data: bytes) -> None:
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
        if payload or ended:
            self._deliver(payload, ended)
        if ended:
            self._end(rest)

    def _deliver(self, payload: bytes, last: bool) -> None:
        if self._push is None:
            self._early.append(payload)
            self._early_end = last
        else:
            self._push(payload, last)

    def _end(self, rest: bytes) -> None:
        """The body ended; bytes past it leave nothing safe to reuse."""
        if rest:
            self.reusable = False
        self._disarm()
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        pending = self._head if self._head is not None and not self._head.done() else self._done
        if pending is not None and not pending.done():
            pending.set_exception(exc)
        self.close()

    def _arm(self) -> None:
        self._disarm()
        self._timer = self._loop.call_at(self._last + self.timeout_s, self._watch)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _watch(self) -> None:
        self._timer = None
        if self._done is None or self._done.done():
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
