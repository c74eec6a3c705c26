"""Small pieces of wording every face shares, so "1 errors" cannot come back one message at a
time."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 error``, ``2 errors``, ``0 errors``; ``many`` for an irregular plural."""
    return f"{n} {noun}" if n == 1 else f"{n} {many or noun + 's'}"
