"""Wire shapes of the three APIs: request parsing, stream events and non-stream bodies.

Each ``*Wire`` renders one reply. Stream events are pre-encoded bytes: the per-token path is
a bytes join, not a dict + JSON encode, so 64 concurrent streams stay cheap.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import orjson

USAGE_NORMAL, USAGE_NONE, USAGE_ZERO = "normal", "none", "zero"


class BadBody(Exception):
    """The JSON body is not a valid request for this endpoint (answer 400)."""


@dataclass
class Ask:
    """What a request asks for, whatever its wire API."""

    api: str  # chat | responses | messages
    model: str
    prompt: str
    stream: bool
    max_tokens: int | None
    temperature: float
    include_usage: bool = False
    seed: int | None = None


def _text_of(content: object) -> str:
    """Text of a message content: a string or a list of text parts (any API's part names)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    return ""


def _messages_text(messages: object) -> str:
    if not isinstance(messages, list) or not messages:
        raise BadBody("'messages' must be a non-empty array")
    return "\n".join(_text_of(m.get("content")) for m in messages if isinstance(m, dict))


def _number(body: dict, *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BadBody(f"'{name}' must be a positive integer")
            return value
    return None


def _temperature(body: dict) -> float:
    value = body.get("temperature", 1.0)
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
        raise BadBody("'temperature' must be a number from 0 to 2")
    return float(value)


def _model(body: dict) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadBody("'model' is required")
    return model


def parse_ask(api: str, raw: bytes) -> Ask:
    try:
        body = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError as exc:
        raise BadBody(f"request body is not valid JSON ({exc})") from None
    if not isinstance(body, dict):
        raise BadBody("request body must be a JSON object")
    stream = bool(body.get("stream", False))
    if api == "chat":
        if body.get("n") not in (None, 1):
            raise BadBody(
                "'n' > 1 is not supported by the eloledger simulator; send separate requests"
            )
        options = body.get("stream_options") or {}
        seed = body.get("seed")
        return Ask(
            api,
            _model(body),
            _messages_text(body.get("messages")),
            stream,
            _number(body, "max_completion_tokens", "max_tokens"),
            _temperature(body),
            include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
            seed=seed if isinstance(seed, int) else None,
        )
    if api == "responses":
        raw_input = body.get("input")
        if isinstance(raw_input, str):
            text = raw_input
        elif isinstance(raw_input, list):
            text = "\n".join(
                _text_of(item.get("content")) if isinstance(item, dict) else str(item)
                for item in raw_input
            )
        else:
            raise BadBody("'input' must be a string or an array")
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            text = instructions + "\n" + text
        return Ask(
            api,
            _model(body),
            text,
            stream,
            _number(body, "max_output_tokens"),
            _temperature(body),
        )
    # Anthropic messages: max_tokens is required by the real API.
    max_tokens = _number(body, "max_tokens")
    if max_tokens is None:
        raise BadBody("max_tokens: Field required")
    system = _text_of(body.get("system"))
    text = _messages_text(body.get("messages"))
    return Ask(
        api,
        _model(body),
        (system + "\n" + text) if system else text,
        stream,
        max_tokens,
        _temperature(body),
    )


def sse(data: object, event: str | None = None) -> bytes:
    payload = b"data: " + orjson.dumps(data) + b"\n\n"
    return (b"event: " + event.encode() + b"\n" + payload) if event else payload


class ChatWire:
    """OpenAI ``/v1/chat/completions``."""

    def __init__(self, ask: Ask, usage_mode: str) -> None:
        self.ask = ask
        self.usage_mode = usage_mode
        self.id = "chatcmpl-sim" + uuid.uuid4().hex[:20]
        self.created = int(time.time())
        self.with_usage = ask.include_usage and usage_mode != USAGE_NONE
        base = {"id": self.id, "object": "chat.completion.chunk", "created": self.created}
        base["model"] = ask.model
        base["system_fingerprint"] = "fp_eloledger_sim"
        head = orjson.dumps(base)[:-1]  # open object, choices appended per chunk
        usage_null = b',"usage":null' if self.with_usage else b""
        self._prefix = b"data: " + head + b',"choices":[{"index":0,"delta":{"content":'
        self._suffix = b'},"logprobs":null,"finish_reason":null}]' + usage_null + b"}\n\n"
        self._base = base

    def _chunk(self, choices: list, usage: object = ...) -> bytes:
        obj = {**self._base, "choices": choices}
        if self.with_usage:
            obj["usage"] = None if usage is ... else usage
        return sse(obj)

    def start(self) -> bytes:
        delta = {"role": "assistant", "content": "", "refusal": None}
        return self._chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])

    def deltas(self, pieces: list[str]) -> bytes:
        return b"".join(self._prefix + orjson.dumps(p) + self._suffix for p in pieces)

    def finish(self, finish: str, prompt: int, completion: int) -> bytes:
        reason = "length" if finish == "length" else "stop"
        out = self._chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}])
        if self.with_usage:
            out += self._chunk([], usage=openai_usage(prompt, completion, self.usage_mode))
        return out + b"data: [DONE]\n\n"

    def error_event(self) -> bytes:
        return sse({"error": stream_error_openai()})

    def body(self, text: str, finish: str, prompt: int, completion: int) -> dict:
        message = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
        obj = {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.ask.model,
            "system_fingerprint": "fp_eloledger_sim",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "length" if finish == "length" else "stop",
                }
            ],
        }
        if self.usage_mode != USAGE_NONE:
            obj["usage"] = openai_usage(prompt, completion, self.usage_mode)
        return obj


def openai_usage(prompt: int, completion: int, mode: str) -> dict:
    if mode == USAGE_ZERO:
        prompt = completion = 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def stream_error_openai() -> dict:
    return {
        "message": "The server had an error while processing your request "
        "(eloledger simulator: injected mid-stream error).",
        "type": "server_error",
        "param": None,
        "code": "server_error",
    }


class ResponsesWire:
    """OpenAI ``/v1/responses``."""

    def __init__(self, ask: Ask, usage_mode: str) -> None:
        self.ask = ask
        self.usage_mode = usage_mode
        self.id = "resp_sim" + uuid.uuid4().hex[:24]
        self.item_id = "msg_sim" + uuid.uuid4().hex[:24]
        self.created = int(time.time())
        self.seq = 0
        self._prefix = (
            b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
            b'"item_id":"' + self.item_id.encode() + b'","output_index":0,"content_index":0,'
            b'"logprobs":[],"delta":'
        )

    def _event(self, kind: str, **fields: object) -> bytes:
        data = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return sse(data, kind)

    def _response(self, status: str, output: list, usage: object, incomplete: object) -> dict:
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": incomplete,
            "instructions": None,
            "max_output_tokens": self.ask.max_tokens,
            "model": self.ask.model,
            "output": output,
            "parallel_tool_calls": True,
            "temperature": self.ask.temperature,
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "text": {"format": {"type": "text"}},
            "truncation": "disabled",
            "usage": usage,
            "metadata": {},
        }

    def _message(self, text: str, status: str) -> dict:
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        return {
            "id": self.item_id,
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": [part] if status != "in_progress" else [],
        }

    def start(self) -> bytes:
        pending = self._response("in_progress", [], None, None)
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return b"".join(
            (
                self._event("response.created", response=pending),
                self._event("response.in_progress", response=pending),
                self._event(
                    "response.output_item.added",
                    output_index=0,
                    item=self._message("", "in_progress"),
                ),
                self._event(
                    "response.content_part.added",
                    item_id=self.item_id,
                    output_index=0,
                    content_index=0,
                    part=part,
                ),
            )
        )

    def deltas(self, pieces: list[str]) -> bytes:
        out = []
        for piece in pieces:
            out.append(
                self._prefix + orjson.dumps(piece) + b',"sequence_number":%d}\n\n' % self.seq
            )
            self.seq += 1
        return b"".join(out)

    def finish(self, finish: str, prompt: int, completion: int, text: str) -> bytes:
        status = "incomplete" if finish == "length" else "completed"
        message = self._message(text, status)
        part = message["content"][0]
        final = self.body(text, finish, prompt, completion)
        return b"".join(
            (
                self._event(
                    "response.output_text.done",
                    item_id=self.item_id,
                    output_index=0,
                    content_index=0,
                    text=text,
                    logprobs=[],
                ),
                self._event(
                    "response.content_part.done",
                    item_id=self.item_id,
                    output_index=0,
                    content_index=0,
                    part=part,
                ),
                self._event("response.output_item.done", output_index=0, item=message),
                self._event(f"response.{status}", response=final),
            )
        )

    def error_event(self) -> bytes:
        error = stream_error_openai()
        return self._event(
            "error", code=error["code"], message=error["message"], param=None, error=error
        )

    def body(self, text: str, finish: str, prompt: int, completion: int) -> dict:
        status = "incomplete" if finish == "length" else "completed"
        incomplete = {"reason": "max_output_tokens"} if finish == "length" else None
        usage = None
        if self.usage_mode != USAGE_NONE:
            if self.usage_mode == USAGE_ZERO:
                prompt = completion = 0
            usage = {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            }
        return self._response(status, [self._message(text, status)], usage, incomplete)


class MessagesWire:
    """Anthropic ``/v1/messages``.

    ``no_usage`` mimics the gateways that drop usage: ``message_start`` reports zeros and
    ``message_delta`` has no ``usage`` at all (anthropic-python's ``messages.stream()`` helper
    then raises AttributeError, as it does against those gateways; raw events work).
    """

    def __init__(self, ask: Ask, usage_mode: str) -> None:
        self.ask = ask
        self.usage_mode = usage_mode
        self.id = "msg_sim" + uuid.uuid4().hex[:24]
        self._prefix = (
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":'
        )

    def _usage(self, prompt: int, completion: int) -> dict:
        if self.usage_mode != USAGE_NORMAL:
            prompt = completion = 0
        return {
            "input_tokens": prompt,
            "output_tokens": completion,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    def start(self, prompt: int) -> bytes:
        message = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.ask.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(prompt, 1),
        }
        return b"".join(
            (
                sse({"type": "message_start", "message": message}, "message_start"),
                sse(
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "content_block_start",
                ),
                sse({"type": "ping"}, "ping"),
            )
        )

    def deltas(self, pieces: list[str]) -> bytes:
        return b"".join(self._prefix + orjson.dumps(p) + b"}}\n\n" for p in pieces)

    def finish(self, finish: str, prompt: int, completion: int) -> bytes:
        delta: dict = {
            "type": "message_delta",
            "delta": {
                "stop_reason": "max_tokens" if finish == "length" else "end_turn",
                "stop_sequence": None,
            },
        }
        if self.usage_mode == USAGE_NORMAL:
            delta["usage"] = {"output_tokens": completion}
        elif self.usage_mode == USAGE_ZERO:
            delta["usage"] = {"output_tokens": 0}
        return b"".join(
            (
                sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
                sse(delta, "message_delta"),
                sse({"type": "message_stop"}, "message_stop"),
            )
        )

    def error_event(self) -> bytes:
        return sse(
            {
                "type": "error",
                "error": {
                    "type": "overloaded_error",
                    "message": "Overloaded (eloledger simulator: injected mid-stream error)",
                },
            },
            "error",
        )

    def body(self, text: str, finish: str, prompt: int, completion: int) -> dict:
        obj = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.ask.model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if finish == "length" else "end_turn",
            "stop_sequence": None,
        }
        if self.usage_mode != USAGE_NONE:
            obj["usage"] = self._usage(prompt, completion)
        return obj
