"""Every simulator fault mode, through the real SDKs, becomes the right error class and status."""

from __future__ import annotations

import pytest

from eloledger.runner.providers import Provider
from eloledger.sim import FAULT_MODES, SimServer
from strict_gateway import GOOD_KEY, GatewayConfig, serve

WIRES = ("openai-chat", "openai-responses", "anthropic")
PROMPT = "A baker makes 24 muffins and sells 9 of them. How many muffins are left?"

# fault -> (status, error_class, http_status, usage_source)
EXPECTED = {
    None: ("ok", None, None, "server"),
    "401": ("error", "auth", 401, "missing"),
    "403": ("error", "permission", 403, "missing"),
    "404_path": ("error", "path", 404, "missing"),
    "404_model": ("error", "not_found", 404, "missing"),
    "429": ("error", "rate_limit", 429, "missing"),
    "429_quota": ("error", "quota", 429, "missing"),
    "500": ("error", "server", 500, "missing"),
    "529": ("error", "overloaded", 529, "missing"),
    "reset": ("error", "connection", None, "estimated"),
    "no_usage": ("ok", "no_usage", None, "estimated"),
    "zero_usage": ("ok", "zero_usage", None, "estimated"),
    "html": ("error", "bad_response", 200, "missing"),
    "slow": ("ok", None, None, "server"),
    "sse_error": ("error", "stream_error", 200, "estimated"),
}


def test_every_fault_mode_has_an_expectation() -> None:
    assert set(FAULT_MODES) == {k for k in EXPECTED if k}


@pytest.fixture
async def sim():
    server = SimServer(speed=200.0, seed=3)
    await server.start()
    yield server
    await server.stop()


def _provider(sim: SimServer, wire: str, key: str = "sk-test-key-123456") -> Provider:
    base = sim.base_url if wire == "anthropic" else sim.openai_base_url
    return Provider(wire_api=wire, base_url=base, api_key=key, model="sim-small", timeout_s=20)


@pytest.mark.parametrize("wire", WIRES)
async def test_fault_modes_land_as_classified_results(sim: SimServer, wire: str) -> None:
    provider = _provider(sim, wire)
    seen_tokens: list[int] = []
    try:
        for fault, (status, cls, http, usage) in EXPECTED.items():
            headers = {"x-sim-fault": fault} if fault else None
            res = await provider.call(
                PROMPT,
                max_tokens=256,
                temperature=0.7,
                headers=headers,
                on_tokens=seen_tokens.append,
            )
            got = (res.status, res.error_class or res.usage_note, res.http_status, res.usage_source)
            assert got == (status, cls, http, usage), f"{wire} {fault}: {res}"
            if status == "ok":
                assert res.content and res.total_tokens and res.total_tokens > 0
                assert res.ttft_ms is not None and res.latency_ms >= res.ttft_ms
                assert res.finish_reason in ("stop", "length")
            else:
                assert res.error
            if fault == "429":
                assert res.retry_after_s is not None and res.retry_after_s > 0
            if usage == "server":
                assert res.prompt_tokens and res.completion_tokens
    finally:
        await provider.close()
    assert sum(seen_tokens) > 0  # the live counter was fed while streaming


@pytest.mark.parametrize("wire", WIRES)
async def test_max_tokens_cut_reports_length(sim: SimServer, wire: str) -> None:
    provider = _provider(sim, wire)
    try:
        res = await provider.call(PROMPT, max_tokens=5, temperature=0.7)
    finally:
        await provider.close()
    assert res.status == "ok"
    assert res.finish_reason == "length"
    assert res.completion_tokens is not None and res.completion_tokens <= 5


async def test_server_usage_replaces_the_streamed_estimate(sim: SimServer) -> None:
    provider = _provider(sim, "openai-chat")
    try:
        res = await provider.call(PROMPT, max_tokens=256, temperature=0.0)
    finally:
        await provider.close()
    assert res.usage_source == "server"
    assert res.streamed_estimate > 0
    assert res.total_tokens == res.prompt_tokens + res.completion_tokens


async def test_unreachable_server_is_a_connection_row_not_a_crash() -> None:
    provider = Provider(
        wire_api="openai-chat",
        base_url="http://127.0.0.1:9/v1",
        api_key="x",
        model="m",
        timeout_s=5,
    )
    try:
        res = await provider.call(PROMPT, max_tokens=16, temperature=0)
    finally:
        await provider.close()
    assert (res.status, res.error_class, res.usage_source) == ("error", "connection", "missing")


def test_retry_after_forms_and_cap() -> None:
    import email.utils
    import time

    from eloledger.runner.providers import CallResult, _retry_after, httpx
    from eloledger.runner.run import _Run
    from eloledger.runner.spec import RetrySpec

    assert _retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert _retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= _retry_after(httpx.Headers({"retry-after": future})) <= 31
    assert _retry_after(httpx.Headers({"retry-after": "soon"})) is None

    class Fake:  # just what _backoff reads
        spec = type("S", (), {"retry": RetrySpec(base_s=1.0, cap_s=8.0, retry_after_cap_s=5.0)})
        rng = __import__("random").Random(0)

    backoff = _Run._backoff
    assert 5.0 <= backoff(Fake, 1, CallResult(retry_after_s=600.0)) <= 5.6  # capped
    assert 2.0 <= backoff(Fake, 1, CallResult(retry_after_s=2.0)) <= 2.3  # honoured
    waits = [backoff(Fake, a, CallResult()) for a in (1, 2, 3, 4, 5, 6)]
    assert 0.5 <= waits[0] <= 1.0 and 4.0 <= waits[3] <= 8.0 and waits[5] <= 8.0  # exp, capped


async def test_a_stream_slower_than_the_timeout_is_a_timeout_row() -> None:
    server = SimServer(speed=1.0)
    await server.start()
    provider = Provider(
        wire_api="openai-chat",
        base_url=server.openai_base_url,
        api_key="k",
        model="sim-small",
        timeout_s=0.3,
    )
    try:
        res = await provider.call(
            PROMPT, max_tokens=64, temperature=0, headers={"x-sim-fault": "slow"}
        )
    finally:
        await provider.close()
        await server.stop()
    assert (res.status, res.error_class, res.http_status) == ("error", "timeout", None)
    assert 250 <= res.latency_ms < 2000


@pytest.mark.parametrize("wire", ("openai-chat", "openai-responses"))
async def test_reasoning_and_cached_token_details_reach_the_row(wire: str) -> None:
    """Chat says prompt/completion_tokens_details, Responses says input/output_: both kept."""
    with serve(GatewayConfig(mode="usage_details")) as gateway:
        provider = Provider(
            wire_api=wire, base_url=gateway.v1, api_key=GOOD_KEY, model="gpt-strict", timeout_s=10
        )
        try:
            res = await provider.call("Say OK.", max_tokens=16, temperature=0.0)
        finally:
            await provider.close()
    assert (res.status, res.usage_source) == ("ok", "server"), res.error
    assert (res.prompt_tokens, res.completion_tokens, res.total_tokens) == (9, 1, 10)
    assert (res.reasoning_tokens, res.cached_tokens) == (1, 4)
