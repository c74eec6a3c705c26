"""Token usage and quota errors as providers put them on the wire: one reading for everyone.

Why one module: the runner (what a row records) and the doctor (what a gateway is judged on)
read the same responses and must agree on them. Pure functions over decoded JSON, no I/O.

The rules follow the ledger's canonical mapping (:mod:`eloledger.ledger.canonical`) so that a
prompt count means the same everywhere: Anthropic's ``input_tokens`` excludes cache reads and
writes, so the prompt count is ``input + cache_read + cache_creation`` (OpenAI's
``prompt_tokens`` already includes cached tokens); ``cached`` is the cache *read* count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A 429 whose code or message holds one of these is spent credit, not a transient limit:
# OpenAI says ``insufficient_quota`` (docs/observed/clients.md "Error bodies"), gateways say billing
# or credit. Google's ``RESOURCE_EXHAUSTED`` is left out: it also marks per-minute limits.

_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass(frozen=True)
class Usage:
    """Token counts of one answer; ``None`` where the provider did not say."""

    prompt: int | None = None
    completion: int | None = None
    total: int | None = None
    reasoning: int | None = None
    cached: int | None = None


def openai_usage(obj: Any) -> Usage | None:
    """Usage from an OpenAI ``usage`` object (Chat Completions or Responses), None if absent
    or without any count.

    Chat says ``prompt/completion_tokens``, Responses says ``input/output_tokens``; the details
    objects carry reasoning and cached counts under the matching prefix.
    """
    if not isinstance(obj, Mapping):
        return None
    return _unless_empty(
        prompt=_first(obj, "prompt_tokens", "input_tokens"),
        completion=_first(obj, "completion_tokens", "output_tokens"),
        total=_count(obj.get("total_tokens")),
        reasoning=_detail(obj, "reasoning_tokens", "completion", "output"),
        cached=_detail(obj, "cached_tokens", "prompt", "input"),
    )


def anthropic_usage(start: Any, *deltas: Any) -> Usage | None:
    """Usage of one Anthropic stream from ``message_start``'s usage and each ``message_delta``'s.

    One rule for the ``input_tokens: 0`` placeholder some gateways put in ``message_start``: a
    later non-zero count wins (input and cache counts alike). ``output_tokens`` is cumulative,
    so the last delta that has it wins; ``message_start``'s own output count is a placeholder
    and is not used. None when no usage came at all (only zero placeholders, no output count).
    A non-streamed body has the final usage already: pass it as both, ``(usage, usage)``.
    """
    fields = ("input_tokens", *_ANTHROPIC_CACHE)
    counts: dict[str, int | None] = {name: _field(start, name) for name in fields}
    completion: int | None = None
    for delta in deltas:
        for name in fields:
            value = _field(delta, name)
            if value:
                counts[name] = value
        output = _field(delta, "output_tokens")
        if output is not None:
            completion = output
    prompt = counts["input_tokens"]
    if prompt is not None:
        prompt += sum(counts[name] or 0 for name in _ANTHROPIC_CACHE)
    if not prompt and completion is None:
        return None
    total = None if prompt is None or completion is None else prompt + completion
    return Usage(prompt, completion, total, None, counts["cache_read_input_tokens"])


def gemini_usage(obj: Any) -> Usage | None:
    """Usage from a Gemini ``usageMetadata`` object, None if absent."""
    if not isinstance(obj, Mapping):
        return None
    return _unless_empty(
        prompt=_count(obj.get("promptTokenCount")),
        completion=_count(obj.get("candidatesTokenCount")),
        total=_count(obj.get("totalTokenCount")),
        reasoning=_count(obj.get("thoughtsTokenCount")),
        cached=_count(obj.get("cachedContentTokenCount")),
    )


def is_quota_error(status: int | None, body_text: str) -> bool:
    """True when retrying cannot help: credit or quota used up (the one rule, in error_kinds)."""
    from eloledger.gateway.error_kinds import QUOTA, read_error

    return read_error(status, None, body_text) == QUOTA


# LiteLLM names the model group (the alias the caller's namespace knows) that answered, after any
# fallback; its deployment's own model is x-litellm-model-name (docs/observed/gateways.md, 1.110.2).
ANSWERED_HEADERS = ("x-litellm-model-group", "x-litellm-model-name")
# A snapshot or version suffix that still names the model asked for: gpt-4o -> gpt-4o-2024-08-06,
# claude-sonnet-4 -> claude-sonnet-4-20250514, m -> m-latest, m -> m:free, m -> m@001.
_SAME_MODEL_TAIL = re.compile(r"^(?:[-@:]\d[\w.-]*|-latest|-preview[\w.-]*|:\w+|@[\w.-]+)$")


def answered_model(headers: Mapping[str, str] | Any, body: Any) -> str | None:
    """The model that answered one call, from the gateway's headers or else the answer's body.

    Why: a gateway can answer with another model than the one asked for (LiteLLM fallbacks,
    claude-code-router's default route) under HTTP 200; only this says so. The gateway's own
    header beats the body, because LiteLLM's ``x-litellm-model-group`` names the answering model
    in the caller's namespace (the body says the upstream's name). The body may be a whole
    answer, a chat chunk, an Anthropic ``message_start`` event, a Responses event or a Gemini
    chunk. None when neither says.
    """
    if headers is not None:
        for name in ANSWERED_HEADERS:
            value = headers.get(name)
            if value and "*" not in value:  # a wildcard group names no model
                return str(value)[:200]
    if not isinstance(body, Mapping):
        return None
    for holder in (body, body.get("message"), body.get("response")):
        if isinstance(holder, Mapping):
            value = holder.get("model") or holder.get("modelVersion")
            if isinstance(value, str) and value:
                return value[:200]
    return None


def same_model(asked: str | None, answered: str | None) -> bool:
    """True when ``answered`` names the model ``asked`` for (or one side is unknown).

    Provider prefixes are not a different model (``openai/sim-small``, claude-code-router's
    ``provider,model``), nor is a dated snapshot of the alias asked for (``gpt-4o-2024-08-06``).
    """
    if not asked or not answered:
        return True
    a, b = _bare(asked), _bare(answered)
    if a == b:
        return True
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer.startswith(shorter) and bool(_SAME_MODEL_TAIL.match(longer[len(shorter) :]))


def _bare(model: str) -> str:
    """A model name without provider prefixes: ``sim,sim-small`` and ``openai/sim-small`` are
    ``sim-small``."""
    return model.strip().lower().rsplit(",", 1)[-1].rsplit("/", 1)[-1].removeprefix("models/")


def _unless_empty(**counts: int | None) -> Usage | None:
    """A usage object with no count at all (``{}``, all null) is no usage."""
    if all(value is None for value in counts.values()):
        return None
    return Usage(**counts)


def _count(value: Any) -> int | None:
    """A token count as an int; None for absent or non-numeric values (bool is not a count)."""
    if type(value) is int:  # what JSON gives, first: the meter reads every call's counts here
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _field(obj: Any, name: str) -> int | None:
    # a decoded JSON object first: the Mapping ABC's check is slow, and the meter reads here
    return _count(obj.get(name)) if type(obj) is dict or isinstance(obj, Mapping) else None


def _first(obj: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = _count(obj.get(name))
        if value is not None:
            return value
    return None


def _detail(obj: Mapping[str, Any], name: str, *prefixes: str) -> int | None:
    for prefix in prefixes:
        details = obj.get(f"{prefix}_tokens_details")
        if isinstance(details, Mapping):
            value = _count(details.get(name))
            if value is not None:
                return value
    return None
