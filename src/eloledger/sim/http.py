"""A minimal HTTP/1.1 layer on asyncio streams: keep-alive, Content-Length and chunked bodies.

Hand-written because the simulator needs nothing more (no routing library, no dependency)
and must stay cheap per token event: a stream is one chunked response whose chunks are
pre-encoded SSE bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from dataclasses import dataclass
from http import HTTPStatus

import orjson

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
SIM_HEADERS = {"x-eloledger-sim": "1", "server": "eloledger-simulator"}


class BadRequest(Exception):
    """The bytes on the wire are not a request we can parse (answer 400 and close)."""


@dataclass
class Request:
    method: str
    target: str  # path with query, as sent
    path: str  # without the query string
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def keep_alive(self) -> bool:
        return self.headers.get("connection", "").lower() != "close"


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on a connection, or None when the client closed it cleanly."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest("truncated request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest("request head too large") from None
    method, target, headers = parse_head(head)
    if is_chunked(headers):
        body = await _read_chunked(reader)
    else:
        length = body_length(headers)
        body = await reader.readexactly(length) if length else b""
    return Request(method, target, target.split("?", 1)[0], headers, body)


def parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """A request head's method, target and headers (names lower-cased); BadRequest if it is
    not one. The simulator's reader and the meter's agent side both read heads here."""
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError:
        raise BadRequest(f"bad request line {lines[0]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(f"bad header line {line!r}")
        headers[name.strip().lower()] = value.strip()
    return method.upper(), target, headers


def is_chunked(headers: dict[str, str]) -> bool:
    return headers.get("transfer-encoding", "").lower() == "chunked"


def body_length(headers: dict[str, str]) -> int:
    """A request's Content-Length (0 without one); BadRequest when it is not a size we take."""
    raw = headers.get("content-length", "0") or "0"
    if not raw.isdigit():  # int() would take "-5", " 5" or "5_0"
        raise BadRequest("bad content-length")
    if int(raw) > MAX_BODY_BYTES:
        raise BadRequest("request body too large")
    return int(raw)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(parts)
        total += size
        if total > MAX_BODY_BYTES:
            raise BadRequest("request body too large")
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _head(status: int, headers: dict[str, str]) -> bytes:
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines.extend(f"{k}: {v}" for k, v in {**SIM_HEADERS, **headers}.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def response_bytes(
    status: int,
    body: bytes,
    *,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
    keep_alive: bool = True,
    head_only: bool = False,
) -> bytes:
    """A complete response with Content-Length (no body bytes for a HEAD request)."""
    all_headers = {
        "content-type": content_type,
        "content-length": str(len(body)),
        "connection": "keep-alive" if keep_alive else "close",
        **(headers or {}),
    }
    return _head(status, all_headers) + (b"" if head_only else body)


def json_response(status: int, obj: object, **kwargs: object) -> bytes:
    return response_bytes(status, orjson.dumps(obj), **kwargs)  # type: ignore[arg-type]


def stream_head(headers: dict[str, str] | None = None) -> bytes:
    """Head of a chunked ``text/event-stream`` response."""
    return _head(
        200,
        {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            "connection": "keep-alive",
            **(headers or {}),
        },
    )


# Gateways send SSE comment lines; clients must ignore them, so the simulator sends one too.
STREAM_COMMENT = b": eloledger simulator\n\n"


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (never empty: an empty chunk ends the body)."""
    return b"%x\r\n%b\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"


def reset_connection(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0) so the client sees 'connection reset by peer'."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
