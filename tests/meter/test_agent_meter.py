"""The metering proxy on its own: real SDKs -> meter -> the embedded simulator, on 127.0.0.1.

The simulator accepts only the real key, so an answer proves the meter put it in place of
the session's token; what the simulator says it served is the truth each call row must equal.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile

import anthropic
import httpx2
import msgspec
import openai
import pytest

from eloledger.meter import Meter, MeterSession, Upstream, client_root
from eloledger.sim import SimServer
from eloledger.sim.http import json_response, read_request

REAL_KEY = "sk-real-gateway-key-" + "7f" * 10


@pytest.fixture
async def sim():
    server = SimServer(speed=500.0, seed=5, api_keys={REAL_KEY})
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def meter():
    m = Meter(timeout_s=30)
    yield m
    await m.aclose()


async def _streamed_chat(oa: openai.AsyncOpenAI) -> None:
    """One streamed chat completion that asks for usage (read to its end)."""
    chat = await oa.chat.completions.create(
        model="sim-small", messages=[{"role": "user", "content": "4+4?"}], stream=True,
        stream_options={"include_usage": True},
    )  # fmt: skip
    async for _ in chat:
        pass


def _served(sim: SimServer) -> tuple[int, int]:
    return sim.stats.prompt_tokens, sim.stats.completion_tokens


async def test_each_wire_is_forwarded_with_the_real_key_and_counted_from_the_answer(
    sim: SimServer, meter: Meter
) -> None:
    session = await meter.open(Upstream(sim.base_url, REAL_KEY), tcp=True)
    root = client_root(session)
    oa = openai.AsyncOpenAI(base_url=root + "/v1", api_key=session.token, max_retries=0)
    an = anthropic.AsyncAnthropic(base_url=root, api_key=session.token, max_retries=0)
    seen = []
    before = _served(sim)
    async with an.messages.stream(
        model="sim-small", max_tokens=64, messages=[{"role": "user", "content": "2+2?"}]
    ) as stream:
        await stream.get_final_message()
    seen.append(_served(sim))
    await an.messages.create(
        model="sim-large", max_tokens=64, messages=[{"role": "user", "content": "3+3?"}]
    )
    seen.append(_served(sim))
    await _streamed_chat(oa)
    seen.append(_served(sim))
    resp = await oa.responses.create(model="sim-small", input="5+5?", stream=True)
    async for _ in resp:
        pass
    seen.append(_served(sim))
    await oa.close()
    await an.close()
    calls = session.calls
    assert [c.wire for c in calls] == ["anthropic", "anthropic", "openai-chat", "openai-responses"]
    assert [c.streamed for c in calls] == [True, False, True, True]
    previous = before
    for call, now in zip(calls, seen, strict=True):
        served = (now[0] - previous[0], now[1] - previous[1])
        previous = now
        assert call.usage is not None and call.http_status == 200
        assert (call.usage.prompt_tokens, call.usage.completion_tokens) == served, call
        assert served[0] > 0 and served[1] > 0
    assert [c.model_asked for c in calls] == ["sim-small", "sim-large", "sim-small", "sim-small"]
    assert all(c.model_answered for c in calls)
    rows = [c.row() for c in calls]
    assert all(r["role"] == "call" and r["usage_source"] == "server" for r in rows)
    assert REAL_KEY not in msgspec.json.encode(rows).decode()


async def _post(session: MeterSession, key_header: dict[str, str]) -> httpx2.Response:
    assert session.socket_path is not None
    transport = httpx2.AsyncHTTPTransport(uds=str(session.socket_path))
    async with httpx2.AsyncClient(transport=transport, base_url="http://meter") as client:
        body = {"model": "sim-small", "max_tokens": 16,
                "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
        return await client.post("/v1/messages", json=body, headers=key_header)


async def test_only_the_sessions_own_token_on_its_own_socket_is_accepted(
    sim: SimServer, meter: Meter
) -> None:
    one = await meter.open(Upstream(sim.base_url, REAL_KEY))
    two = await meter.open(Upstream(sim.base_url, REAL_KEY))
    assert one.token != two.token and one.socket_path != two.socket_path
    requests_before = sum(sim.stats.requests.values())
    refused = [
        await _post(one, {"x-api-key": REAL_KEY}),  # the real key is not a meter credential
        await _post(one, {"x-api-key": two.token}),  # another session's token
        await _post(one, {"authorization": f"Bearer {two.token}"}),
        await _post(one, {"x-api-key": one.token, "authorization": f"Bearer {REAL_KEY}"}),
        await _post(one, {}),
    ]
    assert [r.status_code for r in refused] == [401] * 5
    assert refused[0].json()["error"]["type"] == "authentication_error"
    assert sum(sim.stats.requests.values()) == requests_before  # none went upstream
    assert one.refused == 5 and one.calls == []
    ok = await _post(one, {"x-api-key": one.token})
    assert ok.status_code == 200 and len(one.calls) == 1 and two.calls == []
    # with its own token, still only model calls: nothing else gets the real key
    assert one.socket_path is not None
    transport = httpx2.AsyncHTTPTransport(uds=str(one.socket_path))
    async with httpx2.AsyncClient(transport=transport, base_url="http://meter") as client:
        for path in ("/key/generate", "/v1/files", "/v1beta/models/%2e%2e/%2e%2e/key/generate"):
            other = await client.post(path, json={}, headers={"x-api-key": one.token})
            assert other.status_code == 404, path
    assert sum(sim.stats.requests.values()) == requests_before + 1


async def test_a_deep_temporary_folder_still_gets_its_sockets(
    sim: SimServer, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A unix socket's path holds 107 bytes: a deep $TMPDIR (a test's, a CI's) once failed
    every agent run with 'AF_UNIX path too long'."""
    deep = tmp_path / ("t" * 120)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", None)
    meter = Meter(timeout_s=10)
    try:
        session = await meter.open(Upstream(sim.base_url, REAL_KEY))
        assert session.socket_path is not None and len(bytes(session.socket_path)) < 108
        assert (await _post(session, {"x-api-key": session.token})).status_code == 200
    finally:
        await meter.aclose()


@pytest.mark.parametrize("fault", ["no_usage", "zero_usage"])
async def test_an_answer_without_usage_is_estimated_never_a_free_call(
    sim: SimServer, meter: Meter, fault: str
) -> None:
    session = await meter.open(
        Upstream(sim.base_url, REAL_KEY, (("x-sim-fault", fault),)), tcp=True
    )
    oa = openai.AsyncOpenAI(base_url=client_root(session) + "/v1", api_key=session.token)
    await _streamed_chat(oa)
    await oa.close()
    (call,) = session.calls
    row = call.row()
    assert call.usage is None and row["usage_note"] == fault
    assert row["usage_source"] == "estimated" and row["status"] == "ok"
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0


async def test_the_answering_model_comes_from_litellm_headers_when_the_body_has_none(
    meter: Meter,
) -> None:
    async def gateway(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        req = await read_request(reader)
        assert req is not None and req.headers["authorization"] == f"Bearer {REAL_KEY}"
        body = {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3}}  # fmt: skip
        headers = {"x-litellm-model-group": "gpt-main", "x-litellm-model-name": "openai/sim-small"}
        writer.write(json_response(200, body, headers=headers, keep_alive=False))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(gateway, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        session = await meter.open(Upstream(f"http://127.0.0.1:{port}", REAL_KEY), tcp=True)
        oa = openai.AsyncOpenAI(base_url=client_root(session) + "/v1", api_key=session.token)
        await oa.chat.completions.create(model="gpt-big", messages=[{"role": "user", "content": "x"}])
        await oa.close()
    finally:
        server.close()
    (call,) = session.calls
    # a fallback: the group that answered, in the caller's names (wire.answered_model's rule)
    assert (call.model_asked, call.model_answered) == ("gpt-big", "gpt-main")
    assert (call.usage.prompt_tokens, call.usage.completion_tokens) == (11, 3)  # type: ignore[union-attr]


async def test_a_configured_proxy_is_honoured_and_bypassed_where_the_user_says(
    sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Straight to the gateway on plain streams only where no proxy applies; else httpx2
    (which goes through the proxy: here a closed port, so the call fails as a 502 row)."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    for env in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(env, f"http://127.0.0.1:{port}")
    for bypass, expected in (("", 502), ("127.0.0.1", 200)):
        for env in ("no_proxy", "NO_PROXY"):
            monkeypatch.setenv(env, bypass)
        meter = Meter(timeout_s=10)
        try:
            session = await meter.open(Upstream(sim.base_url, REAL_KEY), tcp=True)
            async with httpx2.AsyncClient(trust_env=False) as client:
                answer = await client.post(
                    client_root(session) + "/v1/messages",
                    json={"model": "sim-small", "max_tokens": 16,
                          "messages": [{"role": "user", "content": "hi"}]},  # fmt: skip
                    headers={"x-api-key": session.token},
                )
        finally:
            await meter.aclose()
        assert answer.status_code == expected, bypass
        (call,) = session.calls
        assert call.http_status == expected and call.ok is (expected == 200)


async def test_an_answer_that_breaks_off_midway_is_a_recorded_failed_call(
    sim: SimServer, meter: Meter
) -> None:
    """The gateway resets the connection a third of the way into a stream: the call is still
    a row (an error, with what usage the stream gave before it broke), and the client sees a
    cut stream."""
    session = await meter.open(
        Upstream(sim.base_url, REAL_KEY, (("x-sim-fault", "reset"),)), tcp=True
    )
    body = {"model": "sim-small", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
    async with httpx2.AsyncClient() as client:
        with pytest.raises(httpx2.HTTPError):
            async with client.stream("POST", client_root(session) + "/v1/messages", json=body,
                                     headers={"x-api-key": session.token}) as answer:  # fmt: skip
                async for _ in answer.aiter_bytes():
                    pass
    (call,) = session.calls
    row = call.row()
    assert row["status"] == "error" and "broke off" in row["error"], row
    assert call.streamed and call.model_answered == "sim-small"
