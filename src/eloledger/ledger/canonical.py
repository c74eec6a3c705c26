"""Turn one ledger row as found in the wild into a canonical row dict (schema v1).

This module is the single definition of what a row *means*; the columnar fast path in
:mod:`eloledger.ledger.columns` must agree with it (a property test checks that). The rules:

* Alias names (``input_tokens``, ``strategy``, ``case_id`` …, see ``schema.ALIASES``) fill the
  canonical field when the canonical one is absent or null; the canonical name wins otherwise.
* A nested ``usage`` object (OpenAI chat / Responses, Anthropic) or Gemini's ``usageMetadata``
  fills token fields still missing at the top level. Anthropic's ``input_tokens`` excludes cache
  reads and writes, so when cache fields are present the prompt count is their sum (OpenAI's
  ``prompt_tokens`` already includes cached tokens): prompt tokens mean the same everywhere.
* ``total_tokens`` = prompt + completion when absent and both parts are known.
* ``usage_source`` absent -> ``server`` when any token count is present, else ``missing``.
* ``status`` absent -> ``error`` when an ``error``/``error_class`` is present, else ``ok``;
  ``success``/``succeeded``/``completed`` -> ``ok``; any other value -> ``error``, so an unknown
  outcome is never counted as a success.
* ``role`` absent -> ``sample``; identifiers (task_id, arm, session, …) become strings.
* Token counts must be finite, non-negative numbers; ``score`` finite; ``passed`` a bool or 0/1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from eloledger.errors import UserError
from eloledger.ledger.schema import ALIASES

# Canonical identifier fields: stored as strings (a task id 17 and "17" are the same task).
ID_FIELDS = (
    "run_id",
    "experiment",
    "task_id",
    "arm",
    "session",
    "model",
    "profile",
    "error_class",
)
COUNT_FIELDS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_tokens",
)
OK_WORDS = frozenset({"ok", "success", "succeeded", "completed"})

# usage-object key -> canonical field, in order of preference (first present wins).
_USAGE_KEYS: dict[str, tuple[str, ...]] = {
    "prompt_tokens": ("prompt_tokens", "input_tokens", "promptTokenCount"),
    "completion_tokens": ("completion_tokens", "output_tokens", "candidatesTokenCount"),
    "total_tokens": ("total_tokens", "totalTokenCount"),
    "cached_tokens": ("cache_read_input_tokens", "cachedContentTokenCount"),
    "reasoning_tokens": ("reasoning_tokens", "thoughtsTokenCount"),
}
_DETAIL_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "cached_tokens": (
        ("prompt_tokens_details", "cached_tokens"),
        ("input_tokens_details", "cached_tokens"),
    ),
    "reasoning_tokens": (
        ("completion_tokens_details", "reasoning_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    ),
}
_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")


def canonicalize(raw: Any, *, where: str = "") -> dict[str, Any]:
    """Return a new canonical row dict; raise :class:`UserError` naming ``where`` if invalid."""
    if not isinstance(raw, dict):
        raise UserError(
            f"{where}: expected a JSON object per line, got {_kind(raw)}",
            fix="each ledger line must be one JSON object",
        )
    row = dict(raw)
    for alias, name in ALIASES.items():
        if alias in row:
            value = row.pop(alias)
            if row.get(name) is None:
                row[name] = value
    for nested in ("usage", "usageMetadata"):
        usage = row.get(nested)
        if isinstance(usage, Mapping):
            fill_from_usage(row, usage)
    for name in COUNT_FIELDS:
        row[name] = check_count(row.get(name), name, where)
    if row["total_tokens"] is None and None not in (row["prompt_tokens"], row["completion_tokens"]):
        row["total_tokens"] = row["prompt_tokens"] + row["completion_tokens"]
    if row.get("usage_source") is None:
        known = any(row[name] is not None for name in COUNT_FIELDS[:3])
        row["usage_source"] = "server" if known else "missing"
    row["status"] = normalize_status(row.get("status"), row.get("error"), row.get("error_class"))
    if row.get("role") is None:
        row["role"] = "sample"
    for name in (*ID_FIELDS, *_TEXT_FIELDS):
        value = row.get(name)
        if isinstance(value, (dict, list)):
            raise UserError(
                f"{where}: {name} must be text or a number, got {_kind(value)}",
                fix=f"write {name} as a string",
            )
        if value is not None and not isinstance(value, str) and name in ID_FIELDS:
            row[name] = id_string(value)
    row["ts"] = parse_ts(row.get("ts"), where)
    row["score"] = check_number(row.get("score"), "score", where)
    row["passed"] = check_passed(row.get("passed"), where)
    return row


# Text columns that are not identifiers (a summary factorises them; a list cannot be a level).
_TEXT_FIELDS = ("role", "status", "usage_source", "error_class", "project", "source")


def fill_from_usage(row: dict[str, Any], usage: Mapping[str, Any]) -> None:
    """Fill token fields that are still missing from a nested usage object."""
    found: dict[str, Any] = {}
    for name, keys in _USAGE_KEYS.items():
        for key in keys:
            if usage.get(key) is not None:
                found[name] = usage[key]
                break
    for name, paths in _DETAIL_KEYS.items():
        if name in found:
            continue
        for outer, inner in paths:
            details = usage.get(outer)
            if isinstance(details, Mapping) and details.get(inner) is not None:
                found[name] = details[inner]
                break
    anthropic_cache = [usage.get(k) for k in _ANTHROPIC_CACHE if usage.get(k) is not None]
    if (
        anthropic_cache
        and usage.get("prompt_tokens") is None
        and _is_number(usage.get("input_tokens"))
        and all(_is_number(v) for v in anthropic_cache)
    ):
        found["prompt_tokens"] = usage["input_tokens"] + sum(anthropic_cache)
    for name, value in found.items():
        if row.get(name) is None:
            row[name] = value


def check_count(value: Any, name: str, where: str) -> int | float | None:
    """A token count: null, or a finite non-negative number (integral floats become ints)."""
    if value is None:
        return None
    if not _is_number(value):
        raise UserError(
            f"{where}: {name} must be a number of tokens, got {_kind(value)}",
            fix="write token counts as JSON numbers (or null when unknown)",
        )
    _refuse_huge(value, name, where)
    if not math.isfinite(value):
        raise UserError(
            f"{where}: {name} is {value} (not a finite number)",
            fix="write null when the token count is unknown",
        )
    if value < 0:
        raise UserError(
            f"{where}: {name} is negative ({value})",
            fix="token counts cannot be negative; write null when unknown",
        )
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _refuse_huge(value: int | float, name: str, where: str) -> None:
    """A count with hundreds of digits would overflow floats, sums and formatting later; no
    real count comes near :data:`MAX_COUNT` (the summary already warns above 1e12)."""
    if math.isnan(value) if isinstance(value, float) else False:
        return
    if abs(value) > MAX_COUNT and not (isinstance(value, float) and math.isinf(value)):
        if isinstance(value, int):
            shown = f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
        else:
            shown = f"{value:.3g}"
        raise UserError(
            f"{where}: {name} is {shown}, too large to be a count (over {MAX_COUNT:.0e})",
            fix="write the real count (or null when unknown)",
        )


MAX_COUNT = 10**18  # a billion times the largest context window; sums of these stay finite


def check_number(value: Any, name: str, where: str) -> int | float | None:
    if value is None:
        return None
    if _is_number(value):
        _refuse_huge(value, name, where)
    if not _is_number(value) or not math.isfinite(value):
        raise UserError(
            f"{where}: {name} must be a finite number or null, got {value!r}",
            fix=f"fix the {name} field of that line",
        )
    return value


def parse_ts(value: Any, where: str = "") -> float | int | None:
    """Unix seconds from a number or an ISO-8601 text (``2026-11-30T10:00:00Z``; no zone =
    UTC), so ``tokens --by day`` groups the guides' ledgers too."""
    if value is None or (_is_number(value) and math.isfinite(value)):
        return value
    if isinstance(value, str):
        import datetime as dt

        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            stamp = dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            stamp = None
        if stamp is not None:
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=dt.UTC)
            return stamp.timestamp()
    raise UserError(
        f"{where}: ts/timestamp must be Unix seconds or ISO-8601 text, got {value!r}",
        fix='write e.g. "2026-11-30T10:00:00Z" or 1764496800',
    )


def check_passed(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if _is_number(value) and value in (0, 1):
        return bool(value)
    raise UserError(
        f"{where}: passed must be true, false, 0, 1 or null, got {value!r}",
        fix="fix the passed field of that line",
    )


def normalize_status(status: Any, error: Any, error_class: Any) -> str:
    """``ok`` or ``error``; anything unrecognised is an error, never a silent success."""
    if status is None:
        return "error" if (error is not None or error_class is not None) else "ok"
    if isinstance(status, str) and status.strip().lower() in OK_WORDS:
        return "ok"
    return "error"


def id_string(value: Any) -> str:
    """Identifiers as text: 17 -> "17", 17.0 -> "17", true -> "true"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string ({value[:20]!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
