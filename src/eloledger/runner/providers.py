"""One streamed model call through the real ``openai`` / ``anthropic`` SDKs -> a :class:`CallResult`.

Why streaming everywhere: the live token counter needs tokens as they arrive, and time to
first token is only measurable on a stream. The SDKs' own retries are off (``max_retries=0``)
so that every attempt is the runner's and lands in the ledger as its own row. A provider error
never escapes :meth:`Provider.call`: it is classified (:func:`classify`) into an
``error_class`` and an HTTP status, and returned.

The SDK builds and sends each request (URL joining, auth headers, typed status errors) through
``with_streaming_response``; the runner reads the event stream's bytes itself and decodes each
event with orjson, because the SDK's typed model per chunk cost ~5x more CPU per call
(profiled: ``construct_type`` was over half of the runner's time).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from eloledger.gateway import error_kinds
from eloledger.gateway.causes import rate_window_wait, read_answer
from eloledger.gateway.wire import (
    Usage,
    answered_model,
    anthropic_usage,
    openai_usage,
)
from eloledger.redact import scrub

try:  # the HTTP library both SDKs are built on (httpx2 in openai 3.x / anthropic 2.x)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

# Classes the runner retries; the others (auth, permission, not_found, quota, bad_request,
# bad_response) will fail the same way again.
# ``cooldown`` (LiteLLM's 429 after an upstream failure) and ``gateway_timeout`` (a 408/504 well
# inside timeout_s: the gateway gave up on its upstream) are retried, but the breaker
# (:mod:`.outcome`) stops a run whose cooldowns follow an error retries cannot fix.
RETRYABLE = frozenset(
    {
        "rate_limit",
        "server",
        "overloaded",
        "timeout",
        "connection",
        "stream_error",
        "cooldown",
        "gateway_timeout",
    }
)


@dataclass
class CallResult:
    status: str = "ok"  # ok | error
    content: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    usage_source: str = "missing"  # server | estimated | missing
    usage_note: str | None = None  # no_usage | zero_usage when the server's usage was unusable
    finish_reason: str | None = None
    ttft_ms: float | None = None
    latency_ms: float = 0.0
    error_class: str | None = None
    error: str | None = None
    http_status: int | None = None
    retry_after_s: float | None = None
    streamed_estimate: int = 0  # tokens counted on the stream (what the live counter got)
    request_id: str | None = None  # the gateway's x-request-id / x-litellm-call-id
    response_id: str | None = None  # the answer's own id (chatcmpl-…, msg_…, resp_…)
    model_answered: str | None = None  # the model that answered (gateway header, else body)

    def ledger_fields(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_tokens": self.cached_tokens,
            "usage_source": self.usage_source,
            "latency_ms": round(self.latency_ms, 2),
            "ttft_ms": None if self.ttft_ms is None else round(self.ttft_ms, 2),
            "status": self.status,
            "error_class": self.error_class or self.usage_note,
            "error": self.error,
            "http_status": self.http_status,
            "finish_reason": self.finish_reason,
            "request_id": self.request_id,
            "call_id": self.response_id,
            "model_answered": self.model_answered,
            "content": self.content,
        }
        return {k: v for k, v in row.items() if v is not None}


class Provider:
    """A wire API + base URL + key + model, with one SDK client reused for every call."""

    def __init__(
        self,
        *,
        wire_api: str,
        base_url: str,
        api_key: str | None,
        model: str,
        timeout_s: float = 120.0,
        auth: str = "bearer",
        max_connections: int = 256,
    ) -> None:
        self.wire_api = wire_api
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        key = api_key or "unset"  # the SDKs refuse to start without one; the server will say 401
        timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        self._http = httpx.AsyncClient(timeout=timeout, limits=limits)
        if wire_api == "anthropic":
            import anthropic

            headers = {"x-api-key": key} if auth == "x-api-key" else None
            self._client: Any = anthropic.AsyncAnthropic(
                base_url=base_url,
                api_key=key,
                max_retries=0,
                timeout=timeout,
                http_client=self._http,
                default_headers=headers,
            )
        else:
            import openai

            self._client = openai.AsyncOpenAI(
                base_url=base_url,
                api_key=key,
                max_retries=0,
                timeout=timeout,
                http_client=self._http,
            )

    async def close(self) -> None:
        await self._client.close()

    async def call(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        on_tokens: Callable[[int], None] | None = None,
        headers: dict[str, str] | None = None,
        model: str | None = None,
        system: str | None = None,
    ) -> CallResult:
        """Stream one completion. Never raises for a provider problem (cancellation passes)."""
        result = CallResult()
        started = time.perf_counter()
        state = _StreamState(result, started, on_tokens)
        state.max_tokens = max_tokens
        body = {
            "model": model or self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "headers": headers,
            "seed": seed,
            "system": system,  # an arm's own system prompt, in each wire's own place
        }
        try:
            stream = self._stream(prompt, state, **body)
            await asyncio.wait_for(stream, timeout=self.timeout_s)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - every provider failure becomes a row
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            elapsed = time.perf_counter() - started
            cls, status, message, retry_after = classify(exc, elapsed, self.timeout_s)
            result.status = "error"
            result.error_class = cls
            result.http_status = status
            result.error = scrub(message)[:1000]
            result.retry_after_s = retry_after
            response = getattr(exc, "response", None)
            if response is not None and result.request_id is None:
                result.request_id = error_kinds.request_id(response.headers)
        result.latency_ms = (time.perf_counter() - started) * 1000.0
        result.content = "".join(state.parts)
        _settle_usage(result, prompt, state)
        return result

    async def _stream(self, prompt: str, state: _StreamState, **body: Any) -> None:
        if self.wire_api == "anthropic":
            await self._anthropic(prompt, state, **body)
        elif self.wire_api == "openai-responses":
            await self._responses(prompt, state, **body)
        else:
            await self._chat(prompt, state, **body)

    async def _chat(self, prompt: str, state: _StreamState, **b: Any) -> None:
        extra: dict[str, Any] = {}
        if b["seed"] is not None:
            extra["seed"] = b["seed"]
        request = self._client.chat.completions.with_streaming_response.create(
            model=b["model"],
            messages=[
                *([{"role": "system", "content": b["system"]}] if b["system"] else []),
                {"role": "user", "content": prompt},
            ],
            max_tokens=b["max_tokens"],
            temperature=b["temperature"],
            stream=True,
            stream_options={"include_usage": True},
            extra_headers=b["headers"],
            **extra,
        )
        async with request as response:
            if await _whole_body(response, state, self.wire_api):
                return
            async for _, data in _sse(response):
                if data == b"[DONE]":
                    state.ended = True
                    continue  # read to the end, so the connection goes back to the pool
                chunk = _json(data)
                state.result.response_id = state.result.response_id or chunk.get("id")
                state.answered(chunk)
                if chunk.get("error"):
                    raise StreamError(f"error event in stream: {_error_text(chunk['error'])}")
                usage = openai_usage(chunk.get("usage"))
                if usage is not None:
                    state.set_usage(usage)
                for choice in chunk.get("choices") or ():
                    delta = (choice.get("delta") or {}).get("content")
                    if delta:
                        state.text(delta)
                    if choice.get("finish_reason"):
                        state.result.finish_reason = choice["finish_reason"]
        state.require_end()

    async def _responses(self, prompt: str, state: _StreamState, **b: Any) -> None:
        request = self._client.responses.with_streaming_response.create(
            model=b["model"],
            input=prompt,
            **({"instructions": b["system"]} if b["system"] else {}),
            max_output_tokens=b["max_tokens"],
            temperature=b["temperature"],
            stream=True,
            extra_headers=b["headers"],
        )
        async with request as response:
            if await _whole_body(response, state, self.wire_api):
                return
            async for event_name, data in _sse(response):
                if data == b"[DONE]":
                    continue
                event = _json(data)
                kind = event.get("type") or event_name or ""
                state.answered(event)
                if kind == "response.output_text.delta":
                    state.text(event.get("delta") or "")
                elif kind in ("response.completed", "response.incomplete"):
                    body = event.get("response") or {}
                    state.result.response_id = body.get("id") or state.result.response_id
                    usage = openai_usage(body.get("usage"))
                    if usage is not None:
                        state.set_usage(usage)
                    state.ended = True
                    reason = (body.get("incomplete_details") or {}).get("reason")
                    if kind == "response.incomplete":
                        state.result.finish_reason = (
                            "length" if reason in (None, "max_output_tokens") else reason
                        )
                    else:
                        state.result.finish_reason = "stop"
                elif kind in ("error", "response.failed"):
                    error = event.get("error") or (event.get("response") or {}).get("error")
                    raise StreamError(f"error event in stream: {_error_text(error or event)}")
        state.require_end()

    async def _anthropic(self, prompt: str, state: _StreamState, **b: Any) -> None:
        request = self._client.messages.with_streaming_response.create(
            model=b["model"],
            max_tokens=b["max_tokens"],
            messages=[{"role": "user", "content": prompt}],
            **({"system": b["system"]} if b["system"] else {}),
            stream=True,
            extra_headers=b["headers"],
            # anthropic-python 2.x dropped the temperature argument; the API still takes it.
            extra_body={"temperature": b["temperature"]},
        )
        start_usage: Any = None
        delta_usages: list[Any] = []
        async with request as response:
            if await _whole_body(response, state, self.wire_api):
                return
            async for event_name, data in _sse(response):
                event = _json(data)
                kind = event.get("type") or event_name or ""
                if kind == "content_block_delta":
                    text = (event.get("delta") or {}).get("text")
                    if text:
                        state.text(text)
                elif kind == "message_start":
                    state.answered(event)
                    start_usage = (event.get("message") or {}).get("usage")
                    state.result.response_id = (event.get("message") or {}).get("id")
                elif kind == "message_delta":
                    if event.get("usage"):
                        delta_usages.append(event["usage"])
                    reason = (event.get("delta") or {}).get("stop_reason")
                    if reason:
                        state.result.finish_reason = _ANTHROPIC_STOP.get(reason, reason)
                elif kind == "message_stop":
                    state.ended = True
                elif kind == "error":
                    raise StreamError(f"error event in stream: {_error_text(event.get('error'))}")
        usage = anthropic_usage(start_usage, *delta_usages)
        if usage is not None:  # None: only the zero placeholders of message_start came
            state.set_usage(usage)
        state.require_end()


async def _sse(response: Any) -> AsyncIterator[tuple[str | None, bytes]]:
    """Server-sent events as ``(event name, data)``; comments and keep-alives skipped.

    Parsing the raw bytes with orjson instead of letting the SDK build a typed model per chunk
    cuts the runner's CPU per streamed token several times (bench/bench_runner.py); the SDK
    still builds the request, sends the key, joins the URL and raises its typed errors.
    """
    pending = b""
    event: str | None = None
    data: list[bytes] = []
    async for chunk in response.iter_bytes():
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for raw in lines:
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                if data:
                    yield event, b"\n".join(data)
                event, data = None, []
            elif line.startswith(b"data:"):
                data.append(line[5:].lstrip())
            elif line.startswith(b"event:"):
                event = line[6:].strip().decode("utf-8", "replace")
    if pending.startswith(b"data:"):
        data.append(pending[5:].lstrip())
    if data:
        yield event, b"\n".join(data)


def _json(data: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise BadResponse(f"stream data is not JSON: {data[:120]!r}") from None
    if not isinstance(value, dict):
        raise BadResponse(f"stream data is not a JSON object: {data[:120]!r}")
    return value


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        message = error.get("message") or ""
        return f"{kind}: {message}" if kind else str(message or error)
    return str(error)


_ANTHROPIC_STOP = {"end_turn": "stop", "max_tokens": "length", "stop_sequence": "stop"}


class StreamError(Exception):
    """The server sent an error inside a 200 stream, or the stream ended without finishing."""


class GatewayError(Exception):
    """An error the gateway answered under HTTP 200 (classic one-api does), already classified."""

    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class


class BadResponse(Exception):
    """A 200 answer that is not an API response (an HTML login page, a proxy's error page)."""


class _StreamState:
    """Accumulates one stream: text parts, time to first token, usage, the live estimate."""

    def __init__(
        self, result: CallResult, started: float, on_tokens: Callable[[int], None] | None
    ) -> None:
        self.result = result
        self.started = started
        self.on_tokens = on_tokens
        self.parts: list[str] = []
        self.usage: Usage | None = None
        self.ended = False
        self.max_tokens: int | None = None  # an estimate never exceeds what was asked for

    def text(self, delta: str) -> None:
        if self.result.ttft_ms is None:
            self.result.ttft_ms = (time.perf_counter() - self.started) * 1000.0
        self.parts.append(delta)
        n = max(1, (len(delta) + 2) // 4)  # ~4 characters a token until usage arrives
        self.result.streamed_estimate += n
        if self.on_tokens is not None:
            self.on_tokens(n)

    def answered(self, event: dict[str, Any]) -> None:
        """The answering model from the first event that names it (a header said it first)."""
        if self.result.model_answered is None:
            self.result.model_answered = answered_model(None, event)

    def set_usage(self, usage: Usage) -> None:
        """The server's usage came: that only happens at the end of a stream."""
        self.usage = usage
        self.ended = True

    def require_end(self) -> None:
        if not self.ended and self.result.finish_reason is None:
            raise StreamError("the stream ended before the model finished (no finish reason)")


async def _whole_body(response: Any, state: _StreamState, wire: str) -> bool:
    """True when a stream was asked but the gateway answered one complete JSON body (read).

    Some gateways (LiteLLM's Anthropic mock, some relay channels) ignore ``stream=true``; the
    doctor accepts that answer, so the runner takes its text and usage too rather than throw
    a paid answer away as ``bad_response``. Anything else that is not an event stream is.
    """
    state.result.request_id = error_kinds.request_id(response.headers)
    state.result.model_answered = answered_model(response.headers, None)
    ctype = response.headers.get("content-type", "")
    if "text/event-stream" in ctype:
        return False
    if "json" in ctype:
        body = error_kinds.body_of(await response.read())
        if isinstance(body, dict) and _take_whole(body, state, wire):
            return True
    _check_event_stream(response)
    return False  # pragma: no cover - _check_event_stream raised


def _take_whole(body: dict[str, Any], state: _StreamState, wire: str) -> bool:
    """Fill the state from a non-stream answer; False when the body is not one."""
    if body.get("error"):
        found = read_answer(200, body)
        message = f"HTTP 200 with an error body: {error_kinds.message_of(body)}"
        raise GatewayError(found.error_class if found is not None else "stream_error", message)
    result = state.result
    if wire == "anthropic" and isinstance(body.get("content"), list):
        text = "".join(b.get("text") or "" for b in body["content"] if isinstance(b, dict))
        usage = anthropic_usage(body.get("usage"), body.get("usage"))
        reason = body.get("stop_reason")
        result.finish_reason = _ANTHROPIC_STOP.get(reason, reason) if reason else "stop"
    elif wire == "openai-responses" and isinstance(body.get("output"), list):
        text = "".join(
            part.get("text") or ""
            for item in body["output"]
            if isinstance(item, dict)
            for part in item.get("content") or ()
            if isinstance(part, dict)
        )
        usage = openai_usage(body.get("usage"))
        result.finish_reason = "length" if body.get("status") == "incomplete" else "stop"
    elif isinstance(body.get("choices"), list) and body["choices"]:
        choice = body["choices"][0] if isinstance(body["choices"][0], dict) else {}
        text = str((choice.get("message") or {}).get("content") or "")
        usage = openai_usage(body.get("usage"))
        result.finish_reason = choice.get("finish_reason") or "stop"
    else:
        return False
    result.response_id = body.get("id")
    state.answered(body)
    if text:
        state.text(text)
    if usage is not None:
        state.set_usage(usage)
    state.ended = True
    return True


def _check_event_stream(response: Any) -> None:
    ctype = response.headers.get("content-type", "")
    if "text/event-stream" not in ctype:
        raise BadResponse(
            f"HTTP {response.status_code} with content-type {ctype or 'none'}, not an event "
            "stream: this URL does not serve the API (a login page or a proxy?)"
        )


def _settle_usage(result: CallResult, prompt: str, state: _StreamState) -> None:
    """Prefer the server's usage; fall back to estimates, and say which one the row holds."""
    usage = state.usage
    if usage is not None and (usage.prompt or usage.completion):
        result.prompt_tokens = usage.prompt or 0
        result.completion_tokens = usage.completion or 0
        result.total_tokens = usage.total or result.prompt_tokens + result.completion_tokens
        result.reasoning_tokens = usage.reasoning or None
        result.cached_tokens = usage.cached or None
        result.usage_source = "server"
        return
    if result.status == "ok":
        result.usage_note = "zero_usage" if usage is not None else "no_usage"
    if result.status == "ok" or result.streamed_estimate:
        # Tokens were spent: estimate them rather than record a zero-token success; never
        # more than max_tokens (the ~4 characters a token guess overshoots on cut streams).
        result.prompt_tokens = max(1, len(prompt) // 4)
        estimate = result.streamed_estimate
        if state.max_tokens is not None and state.max_tokens > 0:
            estimate = min(estimate, state.max_tokens)
        result.completion_tokens = estimate
        result.total_tokens = result.prompt_tokens + result.completion_tokens
        result.usage_source = "estimated"
    else:
        result.usage_source = "missing"


def classify(
    exc: BaseException, elapsed_s: float | None = None, timeout_s: float | None = None
) -> tuple[str, int | None, str, float | None]:
    """``(error_class, http_status, message, retry_after_s)`` for any failure of a call.

    The gateway's body is read as well as its status (:mod:`eloledger.gateway.error_kinds`), the
    same reading the doctor's probe makes, so the run and the doctor name the same cause.
    """
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        response = getattr(exc, "response", None)
        body = _parsed_body(getattr(exc, "body", None))
        said = error_kinds.message_of(body, body if isinstance(body, str) else "")
        message = f"HTTP {status}: {said or getattr(exc, 'message', '') or exc}"
        retry_after = error_kinds.retry_after_s(response.headers) if response is not None else None
        headers = response.headers if response is not None else None
        found = read_answer(
            status,
            body,
            body if isinstance(body, str) else "",
            headers,
            elapsed_s=elapsed_s,
            timeout_s=timeout_s,
        )
        cls = found.error_class if found is not None else "stream_error"
        if cls in ("rate_limit", "cooldown") and retry_after is None and found is not None:
            retry_after = rate_window_wait(found.gateway)  # LiteLLM's rpm: a minute's window
        if cls == "gateway_timeout" and timeout_s is not None and elapsed_s is not None:
            message += (
                f" (after {elapsed_s:.1f} s, well inside timeout_s = {timeout_s:g}: the gateway's "
                "own timeout for its upstream)"
            )
        return cls, status, message, retry_after
    if isinstance(exc, GatewayError):
        return exc.error_class, 200, str(exc), None
    if isinstance(exc, BadResponse):
        return "bad_response", 200, str(exc), None
    if isinstance(exc, StreamError):
        return "stream_error", 200, str(exc), None
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, httpx.TimeoutException)):
        return "timeout", None, f"timed out: {exc or type(exc).__name__}", None
    name = type(exc).__name__
    module = type(exc).__module__
    if name == "APITimeoutError":
        return "timeout", None, f"timed out: {exc}", None
    if name == "APIConnectionError" or isinstance(exc, (httpx.TransportError, ConnectionError)):
        cause = exc.__cause__ or exc.__context__
        detail = f"{exc}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
        return "connection", None, f"connection failed: {detail}", None
    if name in ("APIError",) and module.split(".")[0] in ("openai", "anthropic"):
        # An ``error`` event inside a 200 stream (openai raises APIError without status).
        return "stream_error", 200, f"error event in stream: {exc}", None
    if name in ("APIResponseValidationError", "JSONDecodeError", "ValidationError", "KeyError"):
        return "bad_response", 200, f"unexpected response: {name}: {exc}", None
    if module.split(".")[0] in ("openai", "anthropic", "httpx2", "httpx", "pydantic"):
        return "bad_response", None, f"{name}: {exc}", None
    return "internal", None, f"eloledger bug while calling: {name}: {exc}", None


def _parsed_body(body: Any) -> Any:
    """The SDK's error body: JSON as given; a string parsed as JSON or as SSE error events."""
    if not isinstance(body, (str, bytes)):
        return body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    parsed = error_kinds.body_of(text)
    if parsed is not None:
        return parsed
    for line in text.splitlines():  # an error sent as an event stream (LiteLLM's responses)
        if line.startswith("data:"):
            event = error_kinds.body_of(line[5:].strip())
            if isinstance(event, dict) and event.get("error"):
                return event
    return text.strip()[:1000]


# the name tests/runner/test_runner_providers.py imports
_retry_after = error_kinds.retry_after_s
