"""Every fault mode, through the real SDKs: the right exception, status, headers and body."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from eloledger.sim import FAULT_MODES, SimServer, running_sim
from eloledger.tasks import load_tasks

TASK = load_tasks("builtin:arith")[30]
MESSAGES = [{"role": "user", "content": TASK.prompt}]


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with running_sim(speed=100) as server:
        yield server


def _oai(sim: SimServer, fault: str | None, retries: int = 0) -> openai.OpenAI:
    headers = {"x-sim-fault": fault} if fault else {}
    return openai.OpenAI(
        base_url=sim.openai_base_url, api_key="sk-x", max_retries=retries, default_headers=headers
    )


def _ant(sim: SimServer, fault: str | None) -> anthropic.Anthropic:
    headers = {"x-sim-fault": fault} if fault else {}
    return anthropic.Anthropic(
        base_url=sim.base_url, api_key="sk-ant-x", max_retries=0, default_headers=headers
    )


def _chat(client: openai.OpenAI, **kwargs: object):
    return client.chat.completions.create(model="sim-small", messages=MESSAGES, **kwargs)


def _msg(client: anthropic.Anthropic, **kwargs: object):
    return client.messages.create(model="sim-small", max_tokens=500, messages=MESSAGES, **kwargs)


OPENAI_STATUS = [
    ("401", openai.AuthenticationError, 401, "invalid_api_key"),
    ("403", openai.PermissionDeniedError, 403, "permission_denied"),
    ("404_path", openai.NotFoundError, 404, None),
    ("404_model", openai.NotFoundError, 404, "model_not_found"),
    ("429", openai.RateLimitError, 429, "rate_limit_exceeded"),
    ("429_quota", openai.RateLimitError, 429, "insufficient_quota"),
    ("500", openai.InternalServerError, 500, None),
    ("529", openai.InternalServerError, 529, "overloaded"),
]


@pytest.mark.parametrize(("fault", "exc", "status", "code"), OPENAI_STATUS)
@pytest.mark.parametrize("stream", [False, True])
def test_openai_status_faults(
    sim: SimServer, fault: str, exc: type, status: int, code: str | None, stream: bool
) -> None:
    with pytest.raises(exc) as info:
        _chat(_oai(sim, fault), stream=stream)
    assert info.value.status_code == status
    assert info.value.code == code
    assert info.value.response.headers["x-eloledger-sim"] == "1"
    body = info.value.body
    assert set(body) == {"message", "type", "param", "code"}
    if fault == "404_path":
        assert body["message"] == "Invalid URL (POST /v1/chat/completions)"
    if fault == "429":
        assert float(info.value.response.headers["retry-after"]) > 0
        assert int(info.value.response.headers["retry-after-ms"]) == 10  # 1 s at speed 100


ANTHROPIC_STATUS = [
    ("401", anthropic.AuthenticationError, "authentication_error"),
    ("403", anthropic.PermissionDeniedError, "permission_error"),
    ("404_path", anthropic.NotFoundError, "not_found_error"),
    ("404_model", anthropic.NotFoundError, "not_found_error"),
    ("429", anthropic.RateLimitError, "rate_limit_error"),
    ("429_quota", anthropic.RateLimitError, "rate_limit_error"),
    ("500", anthropic.InternalServerError, "api_error"),
    ("529", anthropic.OverloadedError, "overloaded_error"),
]


@pytest.mark.parametrize(("fault", "exc", "kind"), ANTHROPIC_STATUS)
def test_anthropic_status_faults(sim: SimServer, fault: str, exc: type, kind: str) -> None:
    with pytest.raises(exc) as info:
        _msg(_ant(sim, fault))
    assert info.value.body["type"] == "error"
    assert info.value.body["error"]["type"] == kind
    if fault == "529":
        assert isinstance(info.value, anthropic.InternalServerError)
        assert info.value.status_code == 529


def test_rate_limit_retry_after_is_honoured_by_the_sdk(sim: SimServer) -> None:
    before = sim.stats.total("/v1/chat/completions", 429)
    start = time.perf_counter()
    with pytest.raises(openai.RateLimitError):
        _chat(_oai(sim, "429", retries=2))
    elapsed = time.perf_counter() - start
    assert sim.stats.total("/v1/chat/completions", 429) - before == 3  # first try + 2 retries
    assert elapsed < 1.0  # waited retry-after-ms (10 ms), not the SDK's default backoff


def test_real_unknown_path_and_model(sim: SimServer) -> None:
    no_v1 = openai.OpenAI(base_url=sim.base_url, api_key="sk-x", max_retries=0)
    with pytest.raises(openai.NotFoundError) as info:
        _chat(no_v1)
    assert info.value.body["message"] == "Invalid URL (POST /chat/completions)"
    with pytest.raises(openai.NotFoundError) as info:
        _oai(sim, None).chat.completions.create(model="gpt-9", messages=MESSAGES)
    assert info.value.code == "model_not_found" and "gpt-9" in info.value.body["message"]
    doubled = anthropic.Anthropic(base_url=sim.openai_base_url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.NotFoundError):
        _msg(doubled)  # base URL ending in /v1 -> /v1/v1/messages


def test_reset_mid_stream_raises_connection_error_after_some_chunks(sim: SimServer) -> None:
    received = 0
    with pytest.raises(openai.APIConnectionError):
        for chunk in _chat(_oai(sim, "reset"), stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                received += 1
    assert received >= 1
    with pytest.raises(openai.APIConnectionError):
        _chat(_oai(sim, "reset"))
    # anthropic-python does not wrap a read error mid-stream: the transport error surfaces.
    with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)) as info:
        list(_msg(_ant(sim, "reset"), stream=True))
    assert "reset by peer" in str(info.value)
    with pytest.raises(anthropic.APIConnectionError):
        _msg(_ant(sim, "reset"))


def test_no_usage(sim: SimServer) -> None:
    chunks = list(_chat(_oai(sim, "no_usage"), stream=True, stream_options={"include_usage": True}))
    assert chunks and all(c.usage is None for c in chunks)
    assert all(c.choices for c in chunks)  # no usage chunk with choices == []
    assert _chat(_oai(sim, "no_usage")).usage is None
    resp = _oai(sim, "no_usage").responses.create(model="sim-small", input=TASK.prompt)
    assert resp.usage is None and resp.output_text
    events = list(_msg(_ant(sim, "no_usage"), stream=True))
    delta = next(e for e in events if e.type == "message_delta")
    assert getattr(delta, "usage", None) is None
    assert events[0].message.usage.input_tokens == 0


def test_zero_usage(sim: SimServer) -> None:
    chunks = list(
        _chat(_oai(sim, "zero_usage"), stream=True, stream_options={"include_usage": True})
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text and chunks[-1].usage.total_tokens == 0
    assert _msg(_ant(sim, "zero_usage")).usage.output_tokens == 0


def test_html_login_page(sim: SimServer) -> None:
    raw = _oai(sim, "html").chat.completions.with_raw_response.create(
        model="sim-small", messages=MESSAGES
    )
    assert raw.status_code == 200
    assert raw.headers["content-type"].startswith("text/html")
    assert "<html>" in raw.http_response.text
    parsed = raw.parse()  # the SDK cannot make a completion of it: it hands back the text
    assert isinstance(parsed, str) and "Sign in" in parsed
    assert list(_chat(_oai(sim, "html"), stream=True)) == []  # a stream of nothing, no error


def test_sse_error_event_mid_stream(sim: SimServer) -> None:
    received = 0
    with pytest.raises(openai.APIError) as info:
        for chunk in _chat(_oai(sim, "sse_error"), stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                received += 1
    assert received >= 1 and info.value.body["type"] == "server_error"
    with pytest.raises(openai.APIError):
        list(_oai(sim, "sse_error").responses.create(model="sim-small", input="hi", stream=True))
    with pytest.raises(anthropic.APIStatusError) as ainfo:
        list(_msg(_ant(sim, "sse_error"), stream=True))
    assert ainfo.value.body["error"]["type"] == "overloaded_error"


def test_slow_stream_is_much_slower() -> None:
    # The fault only adds sleeps, so the difference is what it adds; a loaded machine inflates
    # both runs' overhead alike (a ratio of the two failed at load 13), so compare the best of
    # three normal runs with the slow one by the time the fault must add at least.
    with running_sim(speed=5) as server:

        def timed(fault: str | None) -> float:
            start = time.perf_counter()
            list(_chat(_oai(server, fault), stream=True, max_tokens=20))
            return time.perf_counter() - start

        normal = min(timed(None) for _ in range(3))
        slow = timed("slow")
    assert slow > 0.25
    assert slow - normal > 0.2


def test_server_wide_fault_and_rate(sim: SimServer) -> None:
    with running_sim(speed=100, fault="500", fault_rate=0.3, seed=1) as server:
        client = _oai(server, None)
        failures = 0
        for _ in range(40):
            try:
                client.models.list()
            except openai.InternalServerError:
                failures += 1
        assert 4 <= failures <= 22  # about 30 %
        assert server.stats.faults["500"] == failures
        # the per-request header wins over the server's mode
        assert _oai(server, "none").models.list().data
    with running_sim(speed=100, fault="401") as server, pytest.raises(openai.AuthenticationError):
        _oai(server, None).models.list()


def test_unknown_fault_header_is_a_400(sim: SimServer) -> None:
    with pytest.raises(openai.BadRequestError, match="x-sim-fault"):
        _chat(_oai(sim, "bogus"))


def test_constructor_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        SimServer(fault="402")
    with pytest.raises(ValueError):
        SimServer(speed=0)
    with pytest.raises(ValueError):
        SimServer(fault_rate=2)
    assert len(FAULT_MODES) == 14


def test_every_fault_mode_is_exercised_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert all(f'"{mode}"' in source for mode in FAULT_MODES)


def _raw_get(sim: SimServer, path: str, headers: dict) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", sim.port, timeout=10)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    return response.status, body


def test_anthropic_shaped_errors_for_anthropic_clients_on_models(sim: SimServer) -> None:
    status, body = _raw_get(sim, "/v1/models", {"anthropic-version": "2023-06-01"})
    assert status == 401
    assert body["type"] == "error" and body["error"]["type"] == "authentication_error"
    status, body = _raw_get(sim, "/v1/nowhere", {"authorization": "Bearer k"})
    assert status == 404 and body["error"]["message"] == "Invalid URL (GET /v1/nowhere)"
