"""The meter's agent side on raw bytes: what a CLI (or a hostile tool in its sandbox) may send.

Requests are written byte for byte on a socket to a real :class:`Meter` in front of the
embedded simulator; the simulator accepts only the real key, so a 200 proves the request was
framed, checked and forwarded whole.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest

from eloledger.meter import Meter, Upstream
from eloledger.meter.upstream import Unchunk
from eloledger.sim import SimServer

REAL_KEY = "sk-real-gateway-key-" + "5a" * 10
BODY = orjson.dumps({"model": "sim-small", "max_tokens": 16,
                     "messages": [{"role": "user", "content": "1+1?"}]})  # fmt: skip


@pytest.fixture
async def metered():
    """A meter session in front of the simulator: (session, simulator)."""
    sim = SimServer(speed=1000.0, seed=3, api_keys={REAL_KEY})
    await sim.start()
    meter = Meter(timeout_s=30)
    session = await meter.open(Upstream(sim.base_url, REAL_KEY), tcp=True)
    yield session, sim
    await meter.aclose()
    await sim.stop()


def _post(token: str, body: bytes = BODY, *, extra: bytes = b"") -> bytes:
    return (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: %b\r\n"
            b"anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n%b"
            b"content-length: %d\r\n\r\n%b") % (token.encode(), extra, len(body), body)  # fmt: skip


async def _answers(port: int, data: bytes, count: int, *, half_close: bool = False) -> list[bytes]:
    """Send ``data`` in pieces of 7 bytes, then read ``count`` whole answers (heads with
    their bodies)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for at in range(0, len(data), 7):
        writer.write(data[at : at + 7])
        await writer.drain()
    if half_close:
        writer.write_eof()
    answers = []
    for _ in range(count):
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
        fields = dict(
            line.split(b": ", 1) for line in head.split(b"\r\n")[1:] if b": " in line
        )
        if b"content-length" in fields:
            body = await reader.readexactly(int(fields[b"content-length"]))
        else:
            frames, body = Unchunk(), b""
            while not frames.done:
                body += frames.feed(await asyncio.wait_for(reader.read(65536), 20))
        answers.append(head + b"\r\n\r\n" + body)
    writer.close()
    return answers


async def test_requests_sent_back_to_back_in_small_pieces_are_answered_in_order(metered) -> None:
    session, sim = metered
    first, second = await _answers(session.port, _post(session.token) * 2, 2)
    assert first.startswith(b"HTTP/1.1 200") and second.startswith(b"HTTP/1.1 200")
    assert [call.index for call in session.calls] == [1, 2]
    assert sum(c.usage.completion_tokens for c in session.calls) == sim.stats.completion_tokens


async def test_a_chunked_request_body_is_forwarded_whole(metered) -> None:
    session, sim = metered
    framed = b"".join(b"%x\r\n%b\r\n" % (len(BODY[i : i + 9]), BODY[i : i + 9])
                      for i in range(0, len(BODY), 9)) + b"0\r\n\r\n"  # fmt: skip
    request = (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: %b\r\n"
               b"anthropic-version: 2023-06-01\r\ntransfer-encoding: chunked\r\n\r\n%b"
               ) % (session.token.encode(), framed)  # fmt: skip
    (answer,) = await _answers(session.port, request, 1)
    assert answer.startswith(b"HTTP/1.1 200")
    (call,) = session.calls
    assert call.model_asked == "sim-small" and call.usage is not None


async def test_an_agent_that_sends_its_request_and_half_closes_still_gets_the_answer(
    metered,
) -> None:
    session, _ = metered
    (answer,) = await _answers(session.port, _post(session.token), 1, half_close=True)
    assert answer.startswith(b"HTTP/1.1 200")
    assert len(session.calls) == 1


@pytest.mark.parametrize(
    "garbage",
    [
        b"NOT-HTTP\r\n\r\n",  # no request line
        b"POST /v1/messages HTTP/1.1\r\nno colon here\r\n\r\n",  # a header without a name
        b"POST /v1/messages HTTP/1.1\r\ncontent-length: -5\r\n\r\n",  # not a size
        b"POST /v1/messages HTTP/1.1\r\ncontent-length: 99999999999\r\n\r\n",  # over 16 MiB
        b"POST /v1/messages HTTP/1.1\r\nx-pad: " + b"a" * 70_000 + b"\r\n\r\n",  # head > 64 KiB
        b"POST /v1/messages HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",  # bad chunk
    ],
    ids=["request-line", "header", "negative-length", "huge-body", "huge-head", "chunk-size"],
)
async def test_bytes_that_are_not_a_request_get_a_400_and_the_end_and_reach_no_gateway(
    metered, garbage: bytes
) -> None:
    session, sim = metered
    reader, writer = await asyncio.open_connection("127.0.0.1", session.port)
    writer.write(garbage)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 20)  # the meter closes after its answer
    writer.close()
    assert answer.startswith(b"HTTP/1.1 400"), answer[:80]
    assert session.calls == [] and sim.stats.total() == 0


async def test_a_request_cut_off_by_the_agents_end_gets_a_400_and_no_call(metered) -> None:
    session, sim = metered
    reader, writer = await asyncio.open_connection("127.0.0.1", session.port)
    writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")  # the head never ends
    writer.write_eof()
    answer = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 400")
    assert session.calls == [] and sim.stats.total() == 0
