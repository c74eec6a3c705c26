"""The meter's leg to the gateway against scripted gateways on 127.0.0.1: a slow agent, a
gateway that goes quiet, drops a kept-alive connection or does not speak HTTP.

Each gateway here is a few lines of asyncio that write exactly the bytes a test needs, so the
meter's protocol (head parsing, unframing, flow control, the idle watchdog, reuse) is tried
on the cases a well-behaved simulator never produces.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import httpx2
import orjson
import pytest

from eloledger.meter import Meter, Upstream, client_root
from eloledger.meter.upstream import Unchunk

KEY = "sk-scripted-gateway-key-0123456789"
BODY = {"model": "m1", "max_tokens": 8, "stream": True,
        "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _event(obj: dict[str, object]) -> bytes:
    return b"event: %b\ndata: %b\n\n" % (str(obj["type"]).encode(), orjson.dumps(obj))


START = _event({"type": "message_start",
                "message": {"model": "m1", "usage": {"input_tokens": 11, "output_tokens": 1}}})
FILLER = _event({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "x" * 65_000}})
END = _event({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
              "usage": {"output_tokens": 777}}) + _event({"type": "message_stop"})  # fmt: skip
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


async def _request(reader: asyncio.StreamReader) -> bytes:
    """One request's head and body (the meter always sends a content-length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))  # fmt: skip
    return head + await reader.readexactly(length)


@pytest.fixture
async def gateway():
    """Start a scripted gateway: ``await gateway(handler)`` gives its URL."""
    servers: list[asyncio.Server] = []

    async def start(handler: Handler) -> str:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


async def test_a_slow_agent_pauses_the_gateway_and_still_gets_every_byte(gateway) -> None:
    """The agent reads nothing for a while: the meter stops reading the gateway (its socket
    fills up) instead of holding the answer in memory, then relays every byte once the agent
    reads, and counts the gateway's usage."""
    blocked = asyncio.Event()
    filler_sent = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal filler_sent
        writer.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        await _request(reader)
        writer.write(SSE_HEAD + _chunk(START))
        while filler_sent < 2000:  # 130 MB at most: far more than every buffer on the way
            writer.write(_chunk(FILLER))
            filler_sent += 1
            if writer.transport.get_write_buffer_size() > 0:  # the kernel took no more
                blocked.set()
                await writer.drain()
        writer.write(_chunk(END) + b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    meter = Meter(timeout_s=30)
    try:
        session = await meter.open(Upstream(await gateway(handler), KEY), tcp=True)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", session.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        payload = orjson.dumps(BODY)
        writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: %b\r\n"
                     b"content-length: %d\r\nconnection: close\r\n\r\n%b"
                     % (session.token.encode(), len(payload), payload))  # fmt: skip
        await asyncio.wait_for(blocked.wait(), 20)  # nothing read yet, and the gateway waits
        assert filler_sent < 2000
        raw = await asyncio.wait_for(reader.read(), 60)
        writer.close()
        head, _, framed = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        frames = Unchunk()
        body = frames.feed(framed)
        assert frames.done
        assert body == START + FILLER * filler_sent + END
        (call,) = session.calls
        assert call.ok and call.usage is not None
        assert (call.usage.prompt_tokens, call.usage.completion_tokens) == (11, 777)
    finally:
        await meter.aclose()


async def test_a_gateway_that_goes_quiet_midway_is_a_recorded_timed_out_call(gateway) -> None:
    """One event, then silence: the call ends at the meter's timeout as a failed row with the
    usage the stream gave, and the agent sees a cut stream, not a hang."""
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(SSE_HEAD + _chunk(START))
        await writer.drain()
        await release.wait()
        writer.close()

    meter = Meter(timeout_s=0.5)
    try:
        session = await meter.open(Upstream(await gateway(handler), KEY), tcp=True)
        async with httpx2.AsyncClient(timeout=10) as client:
            with pytest.raises(httpx2.HTTPError):
                async with client.stream("POST", client_root(session) + "/v1/messages",
                                         json=BODY, headers={"x-api-key": session.token}) as r:  # fmt: skip
                    async for _ in r.aiter_bytes():
                        pass
        (call,) = session.calls
        row = call.row()
        assert row["status"] == "error" and "TimeoutError" in row["error"], row
        assert call.latency_ms < 5000
    finally:
        release.set()
        await meter.aclose()


async def test_a_kept_alive_connection_the_gateway_drops_is_replaced_once(gateway) -> None:
    """The gateway answers a first call and keeps the connection, then closes it on the next
    request without a word: the meter sends that request again on a new connection."""
    seen: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(len(seen))
        first = len(seen) == 1
        body = orjson.dumps({"model": "m1", "usage": {"input_tokens": 3, "output_tokens": 4},
                             "content": [{"type": "text", "text": "ok"}]})  # fmt: skip
        await _request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%b" % (len(body), body))  # fmt: skip
        await writer.drain()
        if first:
            await _request(reader)  # the second call arrives here: dropped unanswered
        writer.close()

    meter = Meter(timeout_s=10)
    try:
        session = await meter.open(Upstream(await gateway(handler), KEY), tcp=True)
        plain = {**BODY, "stream": False}
        async with httpx2.AsyncClient(timeout=10) as client:
            for _ in range(2):
                r = await client.post(client_root(session) + "/v1/messages", json=plain,
                                      headers={"x-api-key": session.token})  # fmt: skip
                assert r.status_code == 200 and r.json()["content"][0]["text"] == "ok"
        assert len(seen) == 2  # the dropped connection, then a new one
        assert [c.usage.total_tokens for c in session.calls if c.usage] == [7, 7]
    finally:
        await meter.aclose()


@pytest.mark.parametrize("answer", [b"SSH-2.0-OpenSSH_9.6\r\n\r\n", b"HTTP/1.1 abc OK\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\ncontent-length: -5\r\n\r\nabc",
                                    b"HTTP/1.1 200 OK\r\n" + b"a: b\r\n" * 20_000])  # fmt: skip
async def test_a_gateway_that_does_not_speak_http_is_a_502(gateway, answer: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(answer)
        await writer.drain()
        await reader.read()  # until the meter hangs up
        writer.close()

    meter = Meter(timeout_s=10)
    try:
        session = await meter.open(Upstream(await gateway(handler), KEY), tcp=True)
        async with httpx2.AsyncClient(timeout=10) as client:
            r = await client.post(client_root(session) + "/v1/messages", json=BODY,
                                  headers={"x-api-key": session.token})  # fmt: skip
        assert r.status_code == 502
        (call,) = session.calls
        assert call.http_status == 502 and not call.ok
        assert KEY not in r.text
    finally:
        await meter.aclose()


async def test_an_agent_that_hangs_up_midway_is_still_billed_the_whole_answer(gateway) -> None:
    """The agent reads the first event and hangs up; the gateway goes on (it bills the whole
    answer), so the meter reads the answer to its end and counts the gateway's usage."""
    hung_up = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(SSE_HEAD + _chunk(START))
        await writer.drain()
        await hung_up.wait()
        for _ in range(20):
            writer.write(_chunk(FILLER))
            await writer.drain()
        writer.write(_chunk(END) + b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    meter = Meter(timeout_s=30)
    try:
        session = await meter.open(Upstream(await gateway(handler), KEY), tcp=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", session.port)
        payload = orjson.dumps(BODY)
        writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: %b\r\n"
                     b"content-length: %d\r\n\r\n%b"
                     % (session.token.encode(), len(payload), payload))  # fmt: skip
        await reader.readuntil(b"message_start")
        writer.transport.abort()  # a reset, not a polite close
        hung_up.set()
        for _ in range(200):
            if session.calls:
                break
            await asyncio.sleep(0.05)
        (call,) = session.calls
        assert call.usage is not None
        assert (call.usage.prompt_tokens, call.usage.completion_tokens) == (11, 777)
    finally:
        hung_up.set()
        await meter.aclose()


async def test_a_tls_gateway_is_read_and_its_connection_kept(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gateways are https: the meter's leg speaks TLS (verified against the trusted CAs, here a
    self-signed certificate made trusted through SSL_CERT_FILE), relays the stream, counts it,
    and keeps the connection for the next call."""
    import shutil
    import ssl
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl command makes the test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                await _request(reader)
                writer.write(SSE_HEAD + _chunk(START) + _chunk(FILLER) + _chunk(END) + b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=server_tls)
    port = server.sockets[0].getsockname()[1]
    meter = Meter(timeout_s=10)
    try:
        session = await meter.open(Upstream(f"https://localhost:{port}", KEY), tcp=True)
        async with httpx2.AsyncClient(timeout=10) as client:
            for _ in range(2):
                r = await client.post(client_root(session) + "/v1/messages", json=BODY,
                                      headers={"x-api-key": session.token})  # fmt: skip
                assert r.status_code == 200 and r.content == START + FILLER + END
        assert connections == 1  # the second call went on the kept connection
        assert [(c.usage.prompt_tokens, c.usage.completion_tokens) for c in session.calls
                if c.usage] == [(11, 777), (11, 777)]  # fmt: skip
    finally:
        await meter.aclose()
        server.close()
