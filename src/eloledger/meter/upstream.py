"""The meter's leg to the gateway on plain asyncio streams: HTTP/1.1, kept-alive connections.

Why not httpx2 here: the meter forwards bytes it does not need to model, and a general client's
per-request and per-chunk machinery cost as much CPU as the agent's own client (bench/
bench_meter.py). This leg writes the request as received (credentials already replaced) and
hands the answer's body back chunk by chunk as it arrives. It is used only where nothing stands
between the meter and the gateway: an ``http``/``https`` URL with no proxy configured for it
(:func:`direct_ok`); everything else goes through httpx2, which honours the proxy settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit

_MAX_HEAD = 64 * 1024
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_MAX_LINE = 4096  # a chunk-size or trailer line
_READ = 1 << 18  # bytes per read: all that has arrived, in one piece
_IDLE = 8  # kept-alive connections per gateway


def direct_ok(url: str) -> bool:
    """Whether ``url`` is reached without a proxy (as httpx2 would decide from the env)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies and "all" not in proxies:
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]  # as sent (names lower-cased)
    body: AsyncIterator[bytes]

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k == name), "")


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
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._ssl = ssl.create_default_context() if self.tls else None

    async def close(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()

    async def send(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Answer:
        """Send one request; a kept-alive connection the gateway closed meanwhile is replaced
        once (nothing of the answer had come)."""
        head = [f"{method} {self.prefix}{target} HTTP/1.1", f"host: {self.authority}"]
        head += [f"{k}: {v}" for k, v in headers]
        head.append(f"content-length: {len(body)}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        for attempt in (0, 1):
            reused = bool(self._idle) and attempt == 0
            reader, writer = self._idle.pop() if reused else await self._open()
            try:
                writer.write(data)
                await writer.drain()
                async with asyncio.timeout(self.timeout_s):
                    status, answer_headers = await _read_head(reader)
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                writer.close()
                if reused:
                    continue
                raise
            except BaseException:
                writer.close()
                raise
            body_iter = self._body(method, status, answer_headers, reader, writer)
            return Answer(status, answer_headers, body_iter)
        raise ConnectionError("the gateway closed the connection")  # pragma: no cover

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.wait_for(
            asyncio.open_connection(
                self.host, self.port, ssl=self._ssl, server_hostname=self.host if self.tls else None,
                limit=_MAX_HEAD,
            ),
            min(30.0, self.timeout_s),
        )  # fmt: skip

    async def _body(
        self,
        method: str,
        status: int,
        headers: list[tuple[str, str]],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> AsyncIterator[bytes]:
        """The body's bytes as they come, one piece per arrival (a chunked body is unframed
        here, without an await per chunk); the connection is kept when the body ended
        cleanly."""
        fields = dict(headers)
        reusable = "close" not in fields.get("connection", "").lower()
        done = False
        try:
            if method == "HEAD" or status in (204, 304) or status < 200:
                done = True
            elif "chunked" in fields.get("transfer-encoding", "").lower():
                frames = Unchunk()
                while not frames.done:
                    data = await self._read(reader, _READ)
                    if not data:
                        raise ConnectionError("the gateway ended the answer early")
                    if payload := frames.feed(data):
                        yield payload
                done = not frames.rest  # bytes past the body: nothing to reuse safely
            elif "content-length" in fields:
                left = int(fields["content-length"])
                while left > 0:
                    data = await self._read(reader, min(left, _READ))
                    if not data:
                        raise ConnectionError("the gateway ended the answer early")
                    left -= len(data)
                    yield data
                done = True
            else:  # the body ends when the connection does
                reusable = False
                while data := await self._read(reader, _READ):
                    yield data
        finally:
            if done and reusable and len(self._idle) < _IDLE:
                self._idle.append((reader, writer))
            else:
                with contextlib.suppress(Exception):
                    writer.close()

    async def _read(self, reader: asyncio.StreamReader, size: int) -> bytes:
        """What has arrived (up to ``size``), waiting at most the timeout for it. A timeout
        context, not ``wait_for``: on Python 3.11 that wraps every read in a new task."""
        async with asyncio.timeout(self.timeout_s):
            return await reader.read(size)


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
            else:
                size_text = line.split(b";", 1)[0].strip()
                if not _HEX.fullmatch(size_text):
                    raise ValueError("a chunk size is not a hex number")
                size = int(size_text, 16)
                self._left, self._trailer = size, size == 0
        self.rest = buf[pos:]
        return b"".join(out) if len(out) != 1 else out[0]


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, list[tuple[str, str]]]:
    while True:
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = []
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers.append((name.strip().lower(), value.strip()))
        if status != 100:  # a 100 Continue is followed by the real answer
            return status, headers
