"""One reading of wire usage for the runner and the doctor (eloledger.gateway.wire).

Unit cases for the pure functions, then the runner and the doctor reading the same Anthropic
stream (``input_tokens: 0`` placeholder, cache counts only in ``message_delta``) served over
real HTTP on 127.0.0.1 through the real SDK, so the two cannot drift apart again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from eloledger.doctor.probes import _usage_from_body, _usage_from_stream
from eloledger.gateway.wire import (
    Usage,
    anthropic_usage,
    gemini_usage,
    is_quota_error,
    openai_usage,
)
from eloledger.ledger.canonical import canonicalize
from eloledger.runner.providers import Provider, classify

# --- openai_usage -------------------------------------------------------------------------


def test_openai_chat_usage_with_details() -> None:
    usage = openai_usage(
        {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "completion_tokens_details": {"reasoning_tokens": 12},
            "prompt_tokens_details": {"cached_tokens": 100},
        }
    )
    assert usage == Usage(prompt=120, completion=30, total=150, reasoning=12, cached=100)


def test_openai_responses_usage_with_details() -> None:
    usage = openai_usage(
        {
            "input_tokens": 9,
            "output_tokens": 4,
            "total_tokens": 13,
            "output_tokens_details": {"reasoning_tokens": 2},
            "input_tokens_details": {"cached_tokens": 0},
        }
    )
    assert usage == Usage(prompt=9, completion=4, total=13, reasoning=2, cached=0)


@pytest.mark.parametrize("obj", [None, {}, [], "usage", {"prompt_tokens": None}])
def test_openai_missing_usage_is_none(obj: object) -> None:
    assert openai_usage(obj) is None


def test_openai_usage_leaves_absent_counts_none() -> None:
    usage = openai_usage({"prompt_tokens": 5, "completion_tokens": 1.0, "total_tokens": True})
    assert usage == Usage(prompt=5, completion=1, total=None, reasoning=None, cached=None)
    assert isinstance(usage.completion, int)


# --- anthropic_usage ----------------------------------------------------------------------


def test_anthropic_plain_stream() -> None:
    start = {"input_tokens": 25, "output_tokens": 1}
    assert anthropic_usage(start, {"output_tokens": 7}) == Usage(25, 7, 32, None, None)


def test_anthropic_zero_placeholder_later_count_wins() -> None:
    start = {"input_tokens": 0, "output_tokens": 0}
    usage = anthropic_usage(start, {"input_tokens": 40, "output_tokens": 3})
    assert usage == Usage(prompt=40, completion=3, total=43)


def test_anthropic_later_zero_does_not_erase_a_count() -> None:
    usage = anthropic_usage({"input_tokens": 40}, {"input_tokens": 0, "output_tokens": 3})
    assert usage is not None and usage.prompt == 40


def test_anthropic_output_is_cumulative_last_delta_wins() -> None:
    usage = anthropic_usage({"input_tokens": 5}, {"output_tokens": 2}, {"output_tokens": 9})
    assert usage is not None and usage.completion == 9 and usage.total == 14


def test_anthropic_only_placeholders_is_no_usage() -> None:
    assert anthropic_usage({"input_tokens": 0, "output_tokens": 1}) is None
    assert anthropic_usage(None) is None
    assert anthropic_usage({}, None) is None


def test_anthropic_zero_prompt_with_output_is_zero_prompt_usage() -> None:
    # A gateway that never sends the prompt count: usage came, but it is not usable.
    assert anthropic_usage({"input_tokens": 0}, {"output_tokens": 4}) == Usage(0, 4, 4)


def test_anthropic_start_without_output_count() -> None:
    usage = anthropic_usage({"input_tokens": 12})
    assert usage == Usage(prompt=12, completion=None, total=None)


def test_anthropic_cache_counts_join_the_prompt_like_the_ledger() -> None:
    start = {
        "input_tokens": 20,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 5,
    }
    usage = anthropic_usage(start, {"output_tokens": 3})
    assert usage == Usage(prompt=125, completion=3, total=128, reasoning=None, cached=100)
    # The ledger's canonical mapping reads the same usage object the same way.
    row = canonicalize({"usage": {**start, "output_tokens": 3}}, where="t")
    assert (row["prompt_tokens"], row["cached_tokens"]) == (usage.prompt, usage.cached)


def test_anthropic_cache_placeholder_then_real_in_delta() -> None:
    start = {"input_tokens": 0, "cache_read_input_tokens": 0}
    delta = {"input_tokens": 8, "cache_read_input_tokens": 50, "output_tokens": 2}
    assert anthropic_usage(start, delta) == Usage(58, 2, 60, None, 50)


def test_anthropic_whole_body_passed_as_start_and_delta() -> None:
    body_usage = {"input_tokens": 11, "output_tokens": 6, "cache_read_input_tokens": 0}
    assert anthropic_usage(body_usage, body_usage) == Usage(11, 6, 17, None, 0)


# --- gemini_usage -------------------------------------------------------------------------


def test_gemini_usage() -> None:
    usage = gemini_usage(
        {
            "promptTokenCount": 7,
            "candidatesTokenCount": 2,
            "totalTokenCount": 12,
            "thoughtsTokenCount": 3,
            "cachedContentTokenCount": 4,
        }
    )
    assert usage == Usage(7, 2, 12, 3, 4)
    assert gemini_usage({}) is None and gemini_usage(None) is None


# --- is_quota_error -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "text", "quota"),
    [
        (429, "insufficient_quota: You exceeded your current quota", True),
        (429, "Your credit balance is too low", True),
        (429, "billing_hard_limit_reached", True),
        (429, "QUOTA exceeded", True),
        (429, "rate_limit_exceeded: Rate limit reached for requests", False),
        (
            429,
            "rate_limit_error: Number of request tokens has exceeded your per-minute limit",
            False,
        ),
        (429, "RESOURCE_EXHAUSTED", False),
        (429, "", False),
        (402, "", True),
        (500, "quota", False),
        (None, "quota", False),
    ],
)
def test_is_quota_error(status: int | None, text: str, quota: bool) -> None:
    assert is_quota_error(status, text) is quota


# --- the runner and the doctor on the same stream -----------------------------------------

_ANTHROPIC_EVENTS = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn"},
        "usage": {"input_tokens": 30, "cache_read_input_tokens": 70, "output_tokens": 2},
    },
    {"type": "message_stop"},
]

_CHAT_EVENTS = [
    {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": None},
    {
        "choices": [],
        "usage": {
            "prompt_tokens": 50,
            "completion_tokens": 2,
            "total_tokens": 52,
            "prompt_tokens_details": {"cached_tokens": 40},
            "completion_tokens_details": {"reasoning_tokens": 1},
        },
    },
]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.endswith("/messages"):
            lines = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _ANTHROPIC_EVENTS]
        else:
            lines = [f"data: {json.dumps(e)}\n\n" for e in _CHAT_EVENTS] + ["data: [DONE]\n\n"]
        body = "".join(lines).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_runner_and_doctor_agree_on_anthropic_placeholder_stream(base_url: str) -> None:
    provider = Provider(wire_api="anthropic", base_url=base_url, api_key="sk-test", model="m")
    try:
        result = await provider.call("hello", max_tokens=8, temperature=0.0)
    finally:
        await provider.close()
    assert result.status == "ok", result.error
    assert (result.prompt_tokens, result.completion_tokens, result.total_tokens) == (100, 2, 102)
    assert result.cached_tokens == 70 and result.usage_source == "server"
    doctor = _usage_from_stream("anthropic", _ANTHROPIC_EVENTS)
    assert doctor == {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}


async def test_runner_and_doctor_agree_on_chat_stream(base_url: str) -> None:
    provider = Provider(wire_api="openai-chat", base_url=f"{base_url}/v1", api_key="k", model="m")
    try:
        result = await provider.call("hello", max_tokens=8, temperature=0.0)
    finally:
        await provider.close()
    assert result.status == "ok", result.error
    assert (result.prompt_tokens, result.completion_tokens, result.total_tokens) == (50, 2, 52)
    assert (result.cached_tokens, result.reasoning_tokens) == (40, 1)
    doctor = _usage_from_stream("openai-chat", _CHAT_EVENTS)
    assert doctor == {"prompt_tokens": 50, "completion_tokens": 2, "total_tokens": 52}


def test_doctor_body_usage_counts_anthropic_cache() -> None:
    body = {"usage": {"input_tokens": 3, "output_tokens": 1, "cache_creation_input_tokens": 9}}
    assert _usage_from_body("anthropic", body) == {
        "prompt_tokens": 12,
        "completion_tokens": 1,
        "total_tokens": 13,
    }
    assert _usage_from_body("openai-chat", {"usage": {}}) is None


def test_runner_classifies_429_with_the_shared_word_list() -> None:
    import httpx2
    import openai

    def error(code: str, message: str) -> openai.RateLimitError:
        request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
        body = {"error": {"message": message, "type": "requests", "code": code}}
        response = httpx2.Response(429, json=body, request=request)
        return openai.RateLimitError(message, response=response, body=body)

    assert classify(error("insufficient_quota", "You exceeded your current quota"))[0] == "quota"
    assert classify(error("rate_limit_exceeded", "Rate limit reached"))[0] == "rate_limit"
