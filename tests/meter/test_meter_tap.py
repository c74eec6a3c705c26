"""The tap reads a stream's usage and model the same however its bytes arrive.

The streams are the embedded simulator's own answers on each wire (real HTTP on 127.0.0.1);
what the simulator says it served is the truth. Each is fed to a :class:`Tap` whole, one byte
at a time, and in random pieces, including pieces that cut a word the tap looks for
("usage", "model") in two.
"""

from __future__ import annotations

import random

import httpx2
import orjson
import pytest

from eloledger.meter.tap import ANTHROPIC, CHAT, GEMINI, RESPONSES, Tap, asked_model
from eloledger.sim import SimServer

KEY = "sk-tap-test-key-0123456789"
ASKS = {
    ANTHROPIC: ("/v1/messages", {"model": "sim-small", "max_tokens": 64, "stream": True,
                                 "messages": [{"role": "user", "content": "2+2?"}]}),
    CHAT: ("/v1/chat/completions", {"model": "sim-small", "stream": True,
                                    "stream_options": {"include_usage": True},
                                    "messages": [{"role": "user", "content": "3+3?"}]}),
    RESPONSES: ("/v1/responses", {"model": "sim-small", "stream": True, "input": "5+5?"}),
    GEMINI: ("/v1beta/models/sim-small:streamGenerateContent?alt=sse",
             {"contents": [{"role": "user", "parts": [{"text": "7+7?"}]}]}),
}  # fmt: skip


def _pieces(data: bytes, rng: random.Random) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        step = rng.choice((1, 2, 3, 5, 17, 64, 300, 4096))
        out.append(data[pos : pos + step])
        pos += step
    return out


def _read(wire: str, pieces: list[bytes]) -> tuple[object, object, object, int]:
    tap = Tap(wire, True)
    for piece in pieces:
        tap.feed(piece)
    tap.finish()
    return tap.usage, tap.model, tap.error, tap.events


@pytest.mark.parametrize("wire", list(ASKS))
async def test_a_stream_reads_the_same_however_its_bytes_arrive(wire: str) -> None:
    sim = SimServer(speed=1000.0, seed=3, api_keys={KEY})
    await sim.start()
    try:
        path, body = ASKS[wire]
        headers = {"x-api-key": KEY, "authorization": f"Bearer {KEY}", "x-goog-api-key": KEY}
        async with httpx2.AsyncClient() as client:
            answer = await client.post(sim.base_url + path, json=body, headers=headers)
        assert answer.status_code == 200, answer.text
        assert "text/event-stream" in answer.headers["content-type"]
        served = (sim.stats.prompt_tokens, sim.stats.completion_tokens)
    finally:
        await sim.stop()
    data = answer.content
    whole = _read(wire, [data])
    usage, model, error, events = whole
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == served
    assert model == "sim-small" and error is None and events > 0
    assert _read(wire, [data[i : i + 1] for i in range(len(data))]) == whole
    rng = random.Random(11)
    for _ in range(50):
        assert _read(wire, _pieces(data, rng)) == whole
    for word in (b"usage", b"model"):  # a word cut in two at every place it occurs
        at = data.find(word)
        while at >= 0:
            cut = at + 2
            assert _read(wire, [data[:cut], data[cut:]]) == whole
            at = data.find(word, at + 1)


def test_the_asked_model_is_read_from_any_body_and_a_hostile_one_is_none() -> None:
    """The request's model is read without building the conversation; a body that is not a
    JSON object, or is nested a million deep, gives no model (and never an exception: it
    comes from the untrusted agent)."""
    turns = [{"role": "user", "content": [{"type": "text", "text": "word " * 400}]}] * 60
    big = orjson.dumps({"max_tokens": 8000, "messages": turns, "model": "claude-x"})
    assert len(big) > 100_000 and asked_model("anthropic", "/v1/messages", big) == "claude-x"
    assert asked_model("openai-chat", "/v1/chat/completions", b'{"model": 5}') == "5"
    deep = b'{"x":' + b"[" * 1_000_000 + b"]" * 1_000_000 + b', "model": "m"}'
    for hostile in (
        deep,
        b'{"x":' + b"[" * 100_000,
        b"[1, 2]",
        b"not json",
        b"",
        b'{"model": null}',
    ):
        assert asked_model("anthropic", "/v1/messages", hostile) is None
    assert asked_model("gemini", "/v1beta/models/gemini-x:generateContent", b"") == "gemini-x"
