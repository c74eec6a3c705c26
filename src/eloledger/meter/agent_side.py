"""The agent's side of the meter: requests read off a connection as its bytes arrive.

Why a protocol and not asyncio streams: a request is framed and handed on inside the event
loop's read callback, so a call costs no task wake-up to read it (with the gateway's leg,
:mod:`.upstream`, the meter needs no wake-up of its own per call at all; bench/bench_meter.py).
Heads are read by the simulator's own parser (:func:`eloledger.sim.http.parse_head`), under the
same limits: a head over 64 KiB, a body over 16 MiB or bytes that are not HTTP are a 400 and
the connection's end.

One request at a time per connection: a request that arrives while the one before is still
being answered waits in the buffer (reading pauses past a megabyte), as HTTP/1.1 wants.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from eloledger.meter.upstream import Unchunk
from eloledger.sim.http import (
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    BadRequest,
    Request,
    body_length,
    is_chunked,
    parse_head,
)

_HOLD = 1 << 20  # bytes of later requests held while one is answered, before reading pauses


class RequestFramer:
    """Whole requests out of a connection's bytes (Content-Length or chunked bodies)."""

    def __init__(self) -> None:
        self._buf = bytearray()  # appended to in place: a big body comes in many reads
        self._head: tuple[str, str, dict[str, str]] | None = None  # read, body still due
        self._length = 0
        self._chunks: Unchunk | None = None
        self._parts: list[bytes] = []
        self._size = 0

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next(self) -> Request | None:
        """The next whole request, or None until more bytes come; BadRequest if they are not
        one."""
        if self._head is None:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEADER_BYTES:
                    raise BadRequest("request head too large")
                return None
            if end + 4 > MAX_HEADER_BYTES:
                raise BadRequest("request head too large")
            self._head = parse_head(bytes(self._buf[:end]))
            del self._buf[: end + 4]
            headers = self._head[2]
            self._chunks = Unchunk() if is_chunked(headers) else None
            self._length = 0 if self._chunks else body_length(headers)
        body = self._chunked_body() if self._chunks is not None else self._sized_body()
        if body is None:
            return None
        method, target, headers = self._head
        self._head = None
        return Request(method, target, target.split("?", 1)[0], headers, body)

    def partial(self) -> bool:
        """Bytes of a request that has not come whole (at the connection's end: a 400)."""
        return self._head is not None or bool(self._buf.strip())

    def _sized_body(self) -> bytes | None:
        if len(self._buf) < self._length:
            return None
        body = bytes(self._buf[: self._length])
        del self._buf[: self._length]
        return body

    def _chunked_body(self) -> bytes | None:
        assert self._chunks is not None
        try:
            payload = self._chunks.feed(bytes(self._buf))
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        self._buf.clear()
        self._size += len(payload)
        if self._size > MAX_BODY_BYTES:
            raise BadRequest("request body too large")
        if payload:
            self._parts.append(payload)
        if not self._chunks.done:
            return None
        body, self._buf = b"".join(self._parts), bytearray(self._chunks.rest)
        self._chunks, self._parts, self._size = None, [], 0
        return body


class AgentConnection(asyncio.Protocol):
    """One connection from an agent's CLI: each whole request goes to ``serve``, which answers
    through :meth:`write` and calls :meth:`done` when the answer is out."""

    def __init__(
        self, serve: Callable[[AgentConnection, Request], None], bad: Callable[[], bytes]
    ) -> None:
        self._serve = serve
        self._bad = bad  # the 400 answer's bytes
        self.transport: asyncio.Transport | None = None
        self.framer = RequestFramer()
        self.busy = False  # a request is being answered
        self.on_drain: Callable[[bool], None] | None = None  # the answer's flow control
        self.on_lost: Callable[[], None] | None = None  # the agent hung up mid-answer
        self._reading = True
        self._eof = False

    @property
    def gone(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def write(self, data: bytes) -> None:
        if not self.gone:
            assert self.transport is not None
            self.transport.write(data)

    def done(self, keep: bool) -> None:
        """The answer is out: read the next request (those already sent, after the agent's
        end), or close."""
        self.busy, self.on_drain, self.on_lost = False, None, None
        if not keep:
            self.close()
            return
        if not self._reading and self.transport is not None and not self.gone:
            self._reading = True
            self.transport.resume_reading()
        self._next()
        if self._eof and not self.busy:
            self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------------------- asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.framer.feed(data)
        if self.busy:
            if self.framer.buffered > _HOLD and self._reading and self.transport is not None:
                self._reading = False
                self.transport.pause_reading()
            return
        self._next()

    def eof_received(self) -> bool:
        """The agent will send no more: an answer on its way still goes out, then the end."""
        self._eof = True
        if self.busy:
            return True  # keep the transport open to write the answer
        if self.framer.partial():
            self.write(self._bad())
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.busy and self.on_lost is not None:
            self.on_lost()

    def pause_writing(self) -> None:
        if self.on_drain is not None:
            self.on_drain(False)

    def resume_writing(self) -> None:
        if self.on_drain is not None:
            self.on_drain(True)

    def _next(self) -> None:
        while not self.busy and not self.gone:
            try:
                request = self.framer.next()
            except (BadRequest, ValueError):
                self.write(self._bad())
                self.close()
                return
            if request is None:
                return
            self.busy = True
            self._serve(self, request)
