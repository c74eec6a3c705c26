"""Read what a gateway answered: server-sent events, token usage, model lists, error bodies.

Why apart from the probes: these are pure functions of a response (no network, no findings),
the same reading a client does; the prober decides what they mean for the user.
"""

from __future__ import annotations

from typing import Any

import orjson

from eloledger.gateway.wire import (
    Usage,
    anthropic_usage,
    gemini_usage,
    is_quota_error,
    openai_usage,
)


def parse_sse(text: str) -> list[Any]:
    events: list[Any] = []
    data: list[str] = []
    for line in text.splitlines() + [""]:
        if not line:
            if data:
                payload = "\n".join(data)
                if payload.strip() != "[DONE]":
                    try:
                        events.append(orjson.loads(payload))
                    except orjson.JSONDecodeError:
                        events.append({"_unparsed": payload[:200]})
                data = []
            continue
        if line.startswith(":"):
            continue  # comment lines such as ": PROCESSING"
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
    return events


def stream_error(events: list[Any]) -> str | None:
    for event in events:
        if isinstance(event, dict) and (event.get("type") == "error" or "error" in event):
            err = event.get("error")
            return error_message({"error": err}) or str(err)[:200]
    return None


def usage_from_stream(wire: str, events: list[Any]) -> dict[str, int] | None:
    """The final usage a client would compute from this stream, or None when none came."""
    found: Usage | None = None
    start: Any = None
    deltas: list[Any] = []
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if wire == "openai-chat":
            found = openai_usage(event.get("usage")) or found
        elif wire == "openai-responses" and kind in ("response.completed", "response.incomplete"):
            found = openai_usage((event.get("response") or {}).get("usage")) or found
        elif wire == "anthropic" and kind == "message_start":
            start = (event.get("message") or {}).get("usage")
        elif wire == "anthropic" and kind == "message_delta" and event.get("usage"):
            deltas.append(event["usage"])
        elif wire == "gemini":
            found = gemini_usage(event.get("usageMetadata")) or found
    if wire == "anthropic":
        found = anthropic_usage(start, *deltas)
    return usage_counts(found)


def usage_from_body(wire: str, body: Any) -> dict[str, int] | None:
    if not isinstance(body, dict):
        return None
    if wire == "gemini":
        return usage_counts(gemini_usage(body.get("usageMetadata")))
    u = body.get("usage")
    if wire == "anthropic" and isinstance(u, dict) and "input_tokens" in u:
        return usage_counts(anthropic_usage(u, u))  # a whole answer: its usage is already final
    return usage_counts(openai_usage(u))


def usage_counts(usage: Usage | None) -> dict[str, int] | None:
    """The doctor's report form: the three counts, 0 where the server left one out."""
    if usage is None:
        return None
    p = usage.prompt or 0
    c = usage.completion or 0
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": usage.total or p + c}


def has_tokens(usage: dict[str, int] | None) -> bool:
    return bool(usage) and usage["prompt_tokens"] > 0 and usage["total_tokens"] > 0


def usage_where(wire: str) -> str:
    return {
        "openai-chat": "no chunk with usage although stream_options.include_usage was sent",
        "openai-responses": "response.completed has no usage",
        "anthropic": "message_delta has no usage: anthropic-python's messages.stream() raises "
        "AttributeError on it",
        "gemini": "no chunk has usageMetadata",
    }[wire]


def error_message(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    err = body.get("error")
    if isinstance(err, dict):
        return str(err.get("message") or err.get("type") or "")
    if isinstance(err, str):
        return err
    return str(body.get("message") or "")


def error_code(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return ""
    err = body["error"]
    parts = [str(err.get(k) or "") for k in ("code", "type", "status")]
    for detail in err.get("details") or []:
        if isinstance(detail, dict):
            parts.append(str(detail.get("reason") or ""))
    return " ".join(parts).lower()


def mentions_model(body: Any, model: str) -> bool:
    code = error_code(body)
    if "model_not_found" in code:
        return True
    message = error_message(body).lower()
    return "model" in message and (
        model.lower() in message or "not found" in message or "does not exist" in message
    )


def is_key_rejection(status: int, body: Any) -> bool:
    """Gemini answers a bad key with 400 API_KEY_INVALID, not 401."""
    return status == 400 and "api_key_invalid" in error_code(body)


def is_quota(body: Any, text: str) -> bool:
    blob = f"{error_code(body)} {error_message(body)}".strip() or text
    return is_quota_error(429, blob)
