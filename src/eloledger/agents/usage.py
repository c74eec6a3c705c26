"""One model call's tokens on the ledger's canonical mapping, from each CLI's own counters.

Why one place: each tool counts differently and every double count in the wild comes from
mixing them. The canonical meaning (the same as the ledger's ``prompt_tokens`` etc.):

* ``prompt_tokens``: every input token the gateway billed, cache reads and writes included.
  Claude's ``input_tokens`` excludes both cache counts (so they are added); Codex's
  ``input_tokens`` and Gemini's ``prompt`` already include cache reads.
* ``completion_tokens``: every output token, reasoning included. Codex's ``output_tokens``
  includes ``reasoning_output_tokens``; Gemini's ``candidates`` excludes ``thoughts`` (so they
  are added).
* ``cached_tokens``: cache reads; ``cache_write_tokens``: cache writes (both are parts of the
  prompt, never added to the total again); ``reasoning_tokens``: part of the completion.
* ``total_tokens`` = prompt + completion.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypedDict


class UsageFields(TypedDict):
    """The ledger's token fields of one usage (typed, so ``LedgerRow(**usage.as_row())`` is
    checked field by field)."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    total_tokens: int


@dataclass(frozen=True)
class CallUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: CallUsage) -> CallUsage:
        return CallUsage(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def __sub__(self, other: CallUsage) -> CallUsage:
        """For running totals (Codex): this total minus an earlier one is the calls between."""
        return CallUsage(
            **{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)}
        )

    def as_row(self) -> UsageFields:
        """The ledger fields of this usage."""
        return {  # spelled out: dataclasses.fields() per call was a tenth of an import's time
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    @classmethod
    def from_claude(cls, usage: Mapping[str, Any]) -> CallUsage:
        """Anthropic ``usage`` (snake_case) or Claude Code ``modelUsage`` entries (camelCase)."""
        fresh = _int(usage, "input_tokens", "inputTokens")
        read = _int(usage, "cache_read_input_tokens", "cacheReadInputTokens")
        write = _int(usage, "cache_creation_input_tokens", "cacheCreationInputTokens")
        return cls(
            prompt_tokens=fresh + read + write,
            completion_tokens=_int(usage, "output_tokens", "outputTokens"),
            cached_tokens=read,
            cache_write_tokens=write,
        )

    @classmethod
    def from_codex(cls, usage: Mapping[str, Any]) -> CallUsage:
        """Codex ``usage`` / ``token_count`` objects: input includes cached, output reasoning."""
        return cls(
            prompt_tokens=_int(usage, "input_tokens"),
            completion_tokens=_int(usage, "output_tokens"),
            cached_tokens=_int(usage, "cached_input_tokens"),
            cache_write_tokens=_int(usage, "cache_write_input_tokens"),
            reasoning_tokens=_int(usage, "reasoning_output_tokens"),
        )

    @classmethod
    def from_gemini(cls, tokens: Mapping[str, Any]) -> CallUsage:
        """Gemini CLI ``tokens`` (stats.models.*.tokens or a chat log's ``tokens``).

        ``prompt`` (stats) or ``input`` (chat logs, where it already includes the cache) is the
        whole prompt; ``candidates``/``output`` excludes ``thoughts``.
        """
        prompt = _int(tokens, "prompt") if "prompt" in tokens else _int(tokens, "input")
        thoughts = _int(tokens, "thoughts")
        return cls(
            prompt_tokens=prompt,
            completion_tokens=_int(tokens, "candidates", "output") + thoughts,
            cached_tokens=_int(tokens, "cached"),
            reasoning_tokens=thoughts,
        )


def _int(data: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        value = data.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    return 0
