"""The simulator through the real openai and anthropic SDKs: streams, usage, model lists."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import anthropic
import openai
import pytest

from eloledger.sim import SimServer, running_sim
from eloledger.sim.model import tokenize
from eloledger.tasks import load_tasks

TASK = load_tasks("builtin:arith")[20]
MESSAGES = [{"role": "user", "content": TASK.prompt}]


def raw(
    url: str, method: str = "GET", headers: dict | None = None, body: object = None
) -> tuple[int, dict, object]:
    """One plain HTTP request (stdlib), for what the SDKs would hide."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    conn.request(method, parts.path, body=data, headers=headers or {})
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    try:
        decoded: object = json.loads(payload)
    except ValueError:
        decoded = payload
    return response.status, {k.lower(): v for k, v in response.getheaders()}, decoded


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with running_sim(speed=100, seed=3) as server:
        yield server


@pytest.fixture
def oai(sim: SimServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-sim-test", max_retries=0)


@pytest.fixture
def ant(sim: SimServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=sim.base_url, api_key="sk-ant-sim", max_retries=0)


def test_chat_stream_with_include_usage_ends_with_a_usage_chunk(oai: openai.OpenAI) -> None:
    chunks = list(
        oai.chat.completions.create(
            model="sim-small",
            messages=MESSAGES,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    usage_chunks = [c for c in chunks if c.usage is not None]
    assert len(usage_chunks) == 1 and usage_chunks[0] is chunks[-1]
    assert chunks[-1].choices == []
    usage = chunks[-1].usage
    assert usage.completion_tokens == len(tokenize(text)) >= 20
    assert usage.prompt_tokens == (len(TASK.prompt) + 3) // 4
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert "Answer: " in text


def test_chat_stream_without_include_usage_has_no_usage(oai: openai.OpenAI) -> None:
    chunks = list(oai.chat.completions.create(model="sim-small", messages=MESSAGES, stream=True))
    assert chunks and all(c.usage is None for c in chunks)
    assert all(c.choices for c in chunks)


def test_chat_non_stream_usage_and_simulator_header(oai: openai.OpenAI) -> None:
    raw = oai.chat.completions.with_raw_response.create(model="sim-large", messages=MESSAGES)
    assert raw.headers["x-eloledger-sim"] == "1"
    reply = raw.parse()
    assert reply.usage.completion_tokens == len(tokenize(reply.choices[0].message.content))
    assert reply.choices[0].finish_reason == "stop"


def test_max_tokens_cuts_with_length_on_every_api(
    oai: openai.OpenAI, ant: anthropic.Anthropic
) -> None:
    chat = oai.chat.completions.create(
        model="sim-small", messages=MESSAGES, max_completion_tokens=7
    )
    assert chat.choices[0].finish_reason == "length" and chat.usage.completion_tokens == 7
    legacy = oai.chat.completions.create(model="sim-small", messages=MESSAGES, max_tokens=5)
    assert legacy.usage.completion_tokens == 5
    resp = oai.responses.create(model="sim-small", input=TASK.prompt, max_output_tokens=16)
    assert resp.status == "incomplete" and resp.usage.output_tokens == 16
    assert resp.incomplete_details.reason == "max_output_tokens"
    msg = ant.messages.create(model="sim-small", max_tokens=9, messages=MESSAGES)
    assert msg.stop_reason == "max_tokens" and msg.usage.output_tokens == 9


def test_responses_stream_usage_on_completed(oai: openai.OpenAI) -> None:
    deltas = []
    with oai.responses.stream(model="sim-large", input=TASK.prompt) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert final.status == "completed"
    assert final.output_text == "".join(deltas)
    assert final.usage.output_tokens == len(deltas)
    assert final.usage.input_tokens == (len(TASK.prompt) + 3) // 4
    non_stream = oai.responses.create(model="sim-large", input=MESSAGES, instructions="Be brief.")
    assert non_stream.usage.total_tokens == (
        non_stream.usage.input_tokens + non_stream.usage.output_tokens
    )


def test_anthropic_stream_and_non_stream_usage(ant: anthropic.Anthropic) -> None:
    with ant.messages.stream(model="sim-small", max_tokens=1000, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.usage.output_tokens == len(tokenize(text))
    assert final.usage.input_tokens == (len(TASK.prompt) + 3) // 4
    assert final.stop_reason == "end_turn"
    events = [
        e.type
        for e in ant.messages.create(
            model="sim-small", max_tokens=1000, messages=MESSAGES, stream=True
        )
    ]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert "message_delta" in events and "content_block_delta" in events
    plain = ant.messages.create(
        model="sim-large", max_tokens=1000, system="You solve problems.", messages=MESSAGES
    )
    assert plain.usage.output_tokens == len(tokenize(plain.content[0].text))


def test_model_lists_in_both_shapes(oai: openai.OpenAI, ant: anthropic.Anthropic) -> None:
    openai_models = oai.models.list().data
    assert [m.id for m in openai_models] == ["sim-small", "sim-large"]
    assert all(m.owned_by == "eloledger-simulator" for m in openai_models)
    anthropic_models = ant.models.list().data
    assert [m.id for m in anthropic_models] == ["sim-small", "sim-large"]
    assert all("simulator" in m.display_name for m in anthropic_models)
    assert oai.models.retrieve("sim-large").id == "sim-large"
    with pytest.raises(openai.NotFoundError):
        oai.models.retrieve("gpt-nope")


def test_x_api_key_header_is_accepted(sim: SimServer) -> None:
    status, _, body = raw(
        sim.base_url + "/v1/messages",
        "POST",
        headers={"x-api-key": "k-123", "anthropic-version": "2023-06-01"},
        body={"model": "sim-small", "max_tokens": 3, "messages": MESSAGES},
    )
    assert status == 200
    assert body["usage"]["output_tokens"] == 3


def test_api_keys_restrict_access() -> None:
    with running_sim(speed=100, api_keys={"good-key"}) as server:
        good = openai.OpenAI(base_url=server.openai_base_url, api_key="good-key", max_retries=0)
        assert good.models.list().data
        bad = openai.OpenAI(base_url=server.openai_base_url, api_key="bad-key", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as info:
            bad.models.list()
        assert info.value.code == "invalid_api_key"
        status, _, body = raw(server.openai_base_url + "/models")
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
        # Claude Code with both variables set sends both headers: one valid key is enough.
        both = {"authorization": "Bearer stale-token", "x-api-key": "good-key"}
        assert raw(server.openai_base_url + "/models", headers=both)[0] == 200


def test_same_seed_and_sample_reproduce_and_samples_differ(oai: openai.OpenAI) -> None:
    def ask(sample: int, temperature: float = 0.8) -> str:
        reply = oai.chat.completions.create(
            model="sim-small",
            messages=MESSAGES,
            temperature=temperature,
            extra_headers={"x-sim-sample": str(sample)},
        )
        return reply.choices[0].message.content

    assert ask(1) == ask(1)
    assert len({ask(i) for i in range(6)}) > 1
    assert len({ask(i, temperature=0.0) for i in range(4)}) == 1  # greedy: all the same
    by_seed = [
        oai.chat.completions.create(model="sim-small", messages=MESSAGES, seed=11)
        .choices[0]
        .message.content
        for _ in range(2)
    ]
    assert by_seed[0] == by_seed[1]


def test_bad_body_is_400_in_the_protocol_shape(sim: SimServer) -> None:
    status, _, body = raw(
        sim.openai_base_url + "/chat/completions",
        "POST",
        headers={"authorization": "Bearer k"},
        body=b"{oops",
    )
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    status, _, body = raw(
        sim.base_url + "/v1/messages",
        "POST",
        headers={"x-api-key": "k"},
        body={"model": "sim-small", "messages": MESSAGES},
    )
    assert status == 400
    assert body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
    }


def test_keep_alive_reuses_one_connection(sim: SimServer) -> None:
    before = sim.stats.connections
    conn = http.client.HTTPConnection("127.0.0.1", sim.port, timeout=10)
    for _ in range(5):
        conn.request("GET", "/v1/models", headers={"authorization": "Bearer k"})
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["data"]
    conn.close()
    assert sim.stats.connections == before + 1


def test_head_warm_up_gets_a_bodiless_404_and_connection_stays_usable(sim: SimServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", sim.port, timeout=10)
    conn.request("HEAD", "/", headers={"x-api-key": "k"})  # Claude Code's warm-up
    response = conn.getresponse()
    assert response.status == 404 and response.read() == b""
    conn.request("GET", "/v1/models", headers={"x-api-key": "k", "anthropic-version": "x"})
    response = conn.getresponse()
    assert response.status == 200 and json.loads(response.read())["has_more"] is False
    conn.close()


def test_chat_n_above_one_is_refused_plainly(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="send separate requests"):
        oai.chat.completions.create(model="sim-small", messages=MESSAGES, n=3)
