"""Duplicate calls in ledgers: the same row twice, or the same call recorded twice.

A call is identified by ``IDENTITY`` (run, task, arm, session, sample, round, attempt, role and
the provider's call id); byte-identical lines are duplicates whatever they hold. Either comes
from ``cat L L``, two writers on one file, a resumed run appending again, or overlapping shards.
Summaries count a duplicate once and say so; the doctor names the lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

IDENTITY = ("run_id", "task_id", "arm", "session", "sample", "round", "attempt", "role", "call_id")
_ALIASES = {"arm": ("strategy",), "task_id": ("task", "case_id")}
_SHOW = 3


@dataclass
class DuplicateFinder:
    """Feed every row in reading order; :meth:`repeats` says where it was first seen.

    ``ids_within_file``: also count a repeated identity inside one file (the doctor does; the
    summaries only across files, because a ledger from another tool may reuse what look like
    identity fields for distinct calls, while two shards never record the same call).
    """

    ids_within_file: bool = False
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (duplicate, first) file:line
    _lines: dict[bytes, str] = field(default_factory=dict)
    _ids: dict[tuple[Any, ...], tuple[str, str]] = field(default_factory=dict)

    def repeats(self, where: str, line: bytes, row: dict[str, Any], source: str = "") -> str | None:
        """The ``file:line`` this row repeats (and record it), or None for a new call."""
        digest = hashlib.blake2b(line.strip(), digest_size=16).digest()
        first = self._lines.get(digest)
        if first is None:
            self._lines[digest] = where
            first = self._same_call(identity(row), where, source)
        if first is not None:
            self.pairs.append((where, first))
        return first

    def _same_call(self, ident: tuple[Any, ...] | None, where: str, source: str) -> str | None:
        if ident is None:
            return None
        seen = self._ids.setdefault(ident, (where, source))
        if seen[0] == where or (seen[1] == source and not self.ids_within_file):
            return None
        return seen[0]


def identity(row: dict[str, Any]) -> tuple[Any, ...] | None:
    """The call's identity, or None when the row lacks one (a foreign ledger without ids)."""
    values = tuple(_get(row, key) for key in IDENTITY)
    task, sample, session, attempt = values[1], values[4], values[3], values[6]
    if task is None or (sample is None and session is None and attempt is None):
        return None
    return tuple(
        str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in values
    )


def _get(row: dict[str, Any], key: str) -> Any:
    value = row.get(key)
    if value is None:
        for alias in _ALIASES.get(key, ()):
            value = row.get(alias)
            if value is not None:
                break
    if key == "role" and value is None:
        return "sample"
    if isinstance(value, (dict, list)):
        return repr(value)
    return value


def duplicate_message(pairs: Sequence[tuple[str, str]]) -> str:
    """One warning line: how many, and the first few pairs as evidence."""
    shown = ", ".join(f"{dup} repeats {first}" for dup, first in pairs[:_SHOW])
    more = f" (+{len(pairs) - _SHOW} more)" if len(pairs) > _SHOW else ""
    noun = "row records a call" if len(pairs) == 1 else "rows record calls"
    return (
        f"{len(pairs)} duplicate {noun} already recorded, counted once: {shown}{more} "
        "(concatenated files, overlapping shards or two writers?)"
    )
