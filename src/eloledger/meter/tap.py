"""Read one model call's usage and answering model off the bytes the gateway sends back.

Why here and not in the CLI: the CLI (and every tool the agent runs) is untrusted; the bytes
the gateway sent to the meter are not. The counts are read with the same wire readers the chat
arms use (:mod:`eloledger.gateway.wire`), then put on the ledger's canonical mapping
(:class:`~eloledger.agents.usage.CallUsage`: prompt includes cache reads and writes, completion
includes reasoning). A :class:`Tap` is fed the response body chunk by chunk as it is relayed,
so a stream is never held in memory; only event lines that can carry usage are decoded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import orjson

from eloledger.agents.usage import CallUsage
from eloledger.gateway.wire import Usage, anthropic_usage, gemini_usage, openai_usage

ANTHROPIC, CHAT, RESPONSES, GEMINI = "anthropic", "openai-chat", "openai-responses", "gemini"
_MAX_EVENT = 4 << 20  # one SSE event: bigger is not an API event (kept bounded, then dropped)


def wire_of(path: str) -> str | None:
    """The model-call wire of a request path; None for anything else (models, token counts)."""
    if path.endswith("/messages"):
        return ANTHROPIC
    if path.endswith("/chat/completions"):
        return CHAT
    if path.endswith("/responses"):
        return RESPONSES
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return GEMINI
    return None


def asked_model(wire: str, path: str, body: bytes) -> str | None:
    """The model the request asked for (Gemini names it in the path, the others in the body)."""
    if wire == GEMINI:
        name = path.rsplit("/", 1)[-1].split(":", 1)[0]
        return name or None
    try:
        model = _ASKED(body).model
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # (a hostile body)
        return None
    return str(model) if model else None


class _Asked(msgspec.Struct):
    """The one field of a request body the meter reads: an agent's request is 10-200 KB of
    conversation, which msgspec skips without building it (about half orjson's time on a
    107 KB Claude Code request)."""

    model: Any = None


_ASKED = msgspec.json.Decoder(_Asked).decode


def _word_lines(data: bytes, last: int) -> list[tuple[int, int]]:
    """The (start, end) of each whole line of ``data[:last]`` that holds a word every event with
    usage, a model or an error has, in order: only those are worth decoding."""
    if last < 0:
        return []
    spans = set()
    for word in _WORDS:
        at = data.find(word, 0, last)
        while at >= 0:
            end = data.find(b"\n", at)
            spans.add((data.rfind(b"\n", 0, at) + 1, end))
            at = data.find(word, end, last)
    return sorted(spans)


_WORDS = (b"usage", b"model", b"error")  # also modelVersion, usageMetadata


class Tap:
    """Usage, answering model and in-band errors of one response, fed as it is relayed."""

    def __init__(self, wire: str, streamed: bool) -> None:
        self.wire = wire
        self.streamed = streamed
        self.usage: CallUsage | None = None
        self.model: str | None = None
        self.error: str | None = None  # an error event inside a 200 stream
        self.events = 0
        self._pending = b""
        self._whole: list[bytes] = []
        self._anthropic: list[Mapping[str, Any]] = []  # message_start usage, then each delta's

    def feed(self, chunk: bytes) -> None:
        if not self.streamed:
            self._whole.append(chunk)
            return
        data = self._pending + chunk if self._pending else chunk
        last = data.rfind(b"\n")
        for start, end in _word_lines(data, last):  # most lines are text deltas: never split
            line = data[start:end]
            if line.startswith(b"data:"):
                self._event(line[5:].strip())
        rest = data[last + 1 :]
        self._pending = rest if len(rest) <= _MAX_EVENT else b""

    def finish(self) -> None:
        """The body ended: read a whole (non-streamed) body, or a last unterminated line."""
        if self.streamed:
            if self._pending.startswith(b"data:"):
                self._event(self._pending[5:].strip())
            self._pending = b""
        else:
            body = b"".join(self._whole)
            self._whole = []
            self._body(body)
        if self.wire == ANTHROPIC and self._anthropic:
            self.usage = _canonical(ANTHROPIC, anthropic_usage(*self._anthropic), self._anthropic)

    def _event(self, data: bytes) -> None:
        if not data or data == b"[DONE]" or b"usage" not in data and b"model" not in data \
                and b"error" not in data:  # fmt: skip
            return  # a text delta: nothing to count here (the cheap path for most events)
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if isinstance(event, dict):
            self.events += 1
            self._object(event)

    def _body(self, body: bytes) -> None:
        if not body:
            return
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return
        if isinstance(data, list):  # Gemini without SSE: a JSON array of chunks
            for item in data:
                if isinstance(item, dict):
                    self._object(item)
        elif isinstance(data, dict):
            if self.wire == ANTHROPIC and isinstance(data.get("usage"), dict):
                self.model = _text(data.get("model")) or self.model
                self._anthropic = [data["usage"], data["usage"]]
                return
            self._object(data)

    def _object(self, event: dict[str, Any]) -> None:
        """One decoded event (or whole body) of this wire."""
        if event.get("type") == "error" or (event.get("error") and self.wire != RESPONSES):
            self.error = _error_text(event.get("error"))
            return
        if self.wire == ANTHROPIC:
            kind = event.get("type")
            if kind == "message_start" and isinstance(event.get("message"), dict):
                message = event["message"]
                self.model = _text(message.get("model")) or self.model
                self._anthropic = [message.get("usage") or {}]
            elif kind == "message_delta" and isinstance(event.get("usage"), dict):
                self._anthropic.append(event["usage"])
        elif self.wire == RESPONSES:
            response = event.get("response") if "response" in event else event
            if not isinstance(response, dict):
                return
            self.model = _text(response.get("model")) or self.model
            if event.get("type") in ("response.failed", "error") or response.get("error"):
                self.error = _error_text(response.get("error") or event.get("message"))
            raw = response.get("usage")
            if isinstance(raw, dict):
                self.usage = _canonical(RESPONSES, openai_usage(raw), [raw]) or self.usage
        elif self.wire == CHAT:
            self.model = _text(event.get("model")) or self.model
            raw = event.get("usage")
            if isinstance(raw, dict):
                self.usage = _canonical(CHAT, openai_usage(raw), [raw]) or self.usage
        else:  # Gemini: every chunk may repeat usageMetadata; the last one is the count
            self.model = _text(event.get("modelVersion")) or self.model
            raw = event.get("usageMetadata")
            if isinstance(raw, dict):
                self.usage = _canonical(GEMINI, gemini_usage(raw), [raw]) or self.usage


def _canonical(wire: str, usage: Usage | None, raws: list[Mapping[str, Any]]) -> CallUsage | None:
    """The wire reader's counts on the ledger's mapping; None when the gateway gave none.

    ``wire.Usage`` has no cache-write count, so it is read from the raw object (Anthropic's
    ``cache_creation_input_tokens``, the Responses API's ``input_tokens_details``)."""
    if usage is None:
        return None
    prompt, completion = usage.prompt or 0, usage.completion or 0
    reasoning = usage.reasoning or 0
    if wire == GEMINI:  # candidates exclude thoughts; the ledger's completion includes them
        completion += reasoning
    write = 0
    for raw in raws:
        value = raw.get("cache_creation_input_tokens")
        details = raw.get("input_tokens_details") or raw.get("prompt_tokens_details")
        if isinstance(details, dict):
            value = details.get("cache_write_tokens", value)
        if isinstance(value, int) and not isinstance(value, bool) and value:
            write = value
    return CallUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=usage.cached or 0,
        cache_write_tokens=write,
        reasoning_tokens=reasoning,
    )


def _text(value: Any) -> str | None:
    return str(value)[:200] if value else None


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code") or error.get("status")
        message = str(error.get("message") or "")
        return f"{kind}: {message}"[:500] if kind else message[:500]
    return str(error or "error")[:500]
