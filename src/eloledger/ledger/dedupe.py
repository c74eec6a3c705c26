"""Duplicate calls in ledgers: the same row twice, or the same call recorded twice.

A call is identified by ``IDENTITY`` (run, task, arm, session, sample, round, attempt, role and
the provider's call id); byte-identical lines are duplicates whatever they hold. Either comes
from ``cat L L``, two writers on one file, a resumed run appending again, or overlapping shards.
Summaries count a duplicate once and say so; the doctor names the lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, is_not, methodcaller, ne
from typing import Annotated, Any

import msgspec
import numpy as np

from eloledger.ledger.reader import (
    MAX_DEPTH,
    _depth_over,
    _too_deep,
    none_too_deep,
    open_brackets,
)

IDENTITY = ("run_id", "task_id", "arm", "session", "sample", "round", "attempt", "role", "call_id",
            "judged")  # fmt: skip  # judged: what a judge row compared (its arm is "judge")
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


def duplicate_message(pairs: Sequence[tuple[str, str]], total: int | None = None) -> str:
    """One warning line: how many (``total``, default all of ``pairs``), and the first few
    pairs as evidence."""
    count = len(pairs) if total is None else total
    shown = ", ".join(f"{dup} repeats {first}" for dup, first in pairs[:_SHOW])
    more = f" (+{count - _SHOW} more)" if count > _SHOW else ""
    noun = "row records a call" if count == 1 else "rows record calls"
    return (
        f"{count} duplicate {noun} already recorded, counted once: {shown}{more} "
        "(concatenated files, overlapping shards or two writers?)"
    )


# --- the same rules in bulk (summaries over big ledgers) -----------------------------------------

_CHUNK = 8 << 20  # bytes of lines decoded at once: memory stays flat however long the file
_INT_RANGE = (-(1 << 63), (1 << 64) - 1)  # ints orjson reads as ints (others become floats)


class _Fields(msgspec.Struct):
    """Only the fields a call's identity reads (msgspec skips the rest of a line unparsed)."""

    run_id: Any = None
    task_id: Any = None
    task: Any = None
    case_id: Any = None
    arm: Any = None
    strategy: Any = None
    session: Any = None
    sample: Any = None
    round: Any = None
    attempt: Any = None
    role: Any = None
    call_id: Any = None
    judged: Any = None


_DECODER = msgspec.json.Decoder(_Fields)
# 64-bit ints (what msgspec can bound; orjson reads anything past 2**64 as a float)
_Int = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class _Call(msgspec.Struct, frozen=True, gc=False):
    """A call's identity where a ledger writes it the plain way (as the runner does): text ids,
    whole-number counters, no aliases, no null role. Decoding checks all of that in C, and then
    two of these are equal exactly when :func:`identity` says the calls are the same."""

    task_id: str
    run_id: str | None = None
    arm: str | None = None
    session: str | None = None
    sample: _Int | None = None
    round: _Int | None = None
    attempt: _Int | None = None
    role: str = "sample"
    call_id: str | None = None
    judged: str | None = None
    strategy: None = None
    task: None = None
    case_id: None = None


_PLAIN = msgspec.json.Decoder(_Call)
_NO_COUNTERS = (None, None, None)
_counters = attrgetter("sample", "session", "attempt")
_SIMPLE = frozenset((str, bool, type(None)))


@dataclass
class _Part:
    source: int  # index into the distinct sources (two parts of one file share it)
    data: bytes
    numbers: np.ndarray  # line number of each row
    starts: np.ndarray  # byte offset of each row's line in ``data``
    ends: np.ndarray
    line_hash: np.ndarray
    chunks: list[tuple[int, int, int]]  # (start, stop, rows) of each slice of whole lines


def find_duplicates(
    parts: Sequence[tuple[str, bytes]],
) -> tuple[np.ndarray, list[tuple[str, str]]] | None:
    """What feeding every row to :class:`DuplicateFinder` gives, found in bulk.

    ``parts``: (source, the lines the reader read) per ledger, in reading order. Returns the
    keep-mask over all rows and the (duplicate, first) pairs, or None when a line holds what
    only the line-by-line finder reads exactly (the caller then runs it). Lines are compared by
    hash and every match confirmed byte for byte, so a hash collision can only send the work
    back to the exact path; call identities are built from fields msgspec decodes in bulk and
    compared as the very tuples :func:`identity` makes.
    """
    sources: dict[str, int] = {}
    scanned = [
        _scan(sources.setdefault(source, len(sources)), data, source) for source, data in parts
    ]
    names = list(sources)
    if not scanned:
        return np.ones(0, dtype=bool), []
    sizes = [len(p.numbers) for p in scanned]
    part_of = np.concatenate([np.full(n, k) for k, n in enumerate(sizes)])
    source = np.array([p.source for p in scanned])[part_of]
    numbers = np.concatenate([p.numbers for p in scanned])
    starts = np.concatenate([p.starts for p in scanned])
    ends = np.concatenate([p.ends for p in scanned])

    def lines(rows: np.ndarray) -> list[bytes]:
        spans = zip(part_of[rows].tolist(), starts[rows].tolist(), ends[rows].tolist(), strict=True)
        return [scanned[k].data[a:b].strip() for k, a, b in spans]

    def wheres(rows: np.ndarray) -> list[str]:
        located = zip(source[rows].tolist(), numbers[rows].tolist(), strict=True)
        return [f"{names[k]}:{n}" for k, n in located]

    order = np.arange(len(numbers))
    first = _first_of(np.concatenate([p.line_hash for p in scanned]))
    duplicate = first != order
    if lines(order[duplicate]) != lines(first[duplicate]):
        return None  # two lines share a hash: confirm nothing in bulk
    if len(names) > 1:  # identities only matter across files
        found = _first_calls(scanned, ~duplicate)
        if found is None:
            return None
        rows, firsts = found
        other = source[firsts] != source[rows]  # a call repeated inside one file is kept
        duplicate[rows[other]] = True
        first[rows[other]] = firsts[other]
    repeats = np.flatnonzero(duplicate)
    return ~duplicate, list(zip(wheres(repeats), wheres(first[repeats]), strict=True))


def _first_of(hashes: np.ndarray) -> np.ndarray:
    """For each position, the first position holding the same value."""
    if len(hashes) == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


def _scan(source: int, data: bytes, source_name: str = "") -> _Part:
    """Where every non-blank line is and the hash of its bytes, chunk by chunk."""
    numbers, starts, ends, line_hash, chunks = [], [], [], [], []
    pos, number = 0, 1
    while pos < len(data):
        stop = data.find(b"\n", pos + _CHUNK)
        stop = len(data) if stop < 0 else stop + 1
        chunk = data[pos:stop]
        raw = chunk.split(b"\n")
        if chunk.endswith(b"\n"):
            raw.pop()
        stripped = list(map(bytes.strip, raw))
        keep = np.fromiter(map(bool, stripped), dtype=bool, count=len(raw))
        lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        begin = pos + np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
        lines = list(compress(stripped, keep))
        _refuse_deep(source_name, number, raw, chunk, len(lines))
        numbers.append((number + np.arange(len(raw)))[keep])
        starts.append(begin[keep])
        ends.append((begin + lengths)[keep])
        line_hash.append(np.fromiter(map(hash, lines), dtype=np.int64, count=len(lines)))
        chunks.append((pos, stop, len(lines)))
        number += len(raw)  # every chunk but the last ends with a newline (popped above)
        pos = stop
    empty = np.zeros(0, dtype=np.int64)
    joined = [np.concatenate(x) if x else empty for x in (numbers, starts, ends, line_hash)]
    return _Part(source, data, *joined, chunks)


def _refuse_deep(
    source: str, first_number: int, lines: list[bytes], chunk: bytes, rows: int
) -> None:
    """One ``file:line`` error for a line nested deeper than any ledger row.

    The bulk path decodes only the fields it needs, and msgspec skips an unknown field's value
    without building it: a line of 100k nested brackets would pass as an empty row. Counting
    brackets is C-speed; only a line with more than MAX_DEPTH of them is scanned exactly, and
    for flat rows one count of the chunk's (``rows``: its non-blank lines) says there is none
    (:func:`reader.none_too_deep`).
    """
    if none_too_deep(open_brackets(chunk), rows):
        return
    opens = np.fromiter(map(methodcaller("count", b"{"), lines), dtype=np.int64, count=len(lines))
    opens += np.fromiter(map(methodcaller("count", b"["), lines), dtype=np.int64, count=len(lines))
    for index in np.flatnonzero(opens > MAX_DEPTH).tolist():
        if _depth_over(lines[index], MAX_DEPTH):
            raise _too_deep(f"{source}:{first_number + index}")


def _first_calls(scanned: list[_Part], fresh: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(row, first row of the same call) for each ``fresh`` row whose call was seen before.

    ``fresh``: rows that repeat no earlier line (only those register a call, as in
    :meth:`DuplicateFinder.repeats`). Ledgers written the plain way are compared as decoded
    (:class:`_Call`); any other line sends every file through the general decoding.
    """
    for decode in (_plain_identities, _identities):
        found = _match_calls(scanned, fresh, decode)
        if found is not None:
            return found
    return None


def _match_calls(
    scanned: list[_Part],
    fresh: np.ndarray,
    decode: Callable[[bytes, int], tuple[list[Any], np.ndarray] | None],
) -> tuple[np.ndarray, np.ndarray] | None:
    seen: dict[Any, int] = {}
    rows, firsts = [], []
    offset = 0
    for part in scanned:
        for start, stop, count in part.chunks:
            if not fresh[offset : offset + count].any():  # all repeat earlier lines (cat L L)
                offset += count
                continue
            idents = decode(part.data[start:stop], count)
            if idents is None:
                return None
            mine = fresh[offset : offset + count] & idents[1]
            at = list(compress(range(offset, offset + count), mine))
            first = list(map(seen.setdefault, compress(idents[0], mine), at))
            rows.append(np.array(at, dtype=np.int64))
            firsts.append(np.array(first, dtype=np.int64))
            offset += count
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    row, first = np.concatenate(rows), np.concatenate(firsts)
    again = first != row
    return row[again], first[again]


def _plain_identities(chunk: bytes, count: int) -> tuple[list[Any], np.ndarray] | None:
    """The lines of ``chunk`` as :class:`_Call` (None unless every line is plain)."""
    try:
        calls = _PLAIN.decode_lines(chunk)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(calls) != count:
        return None
    has = np.fromiter(map(ne, map(_counters, calls), repeat(_NO_COUNTERS)), dtype=bool, count=count)
    return calls, has


def _identities(chunk: bytes, count: int) -> tuple[list[Any], np.ndarray] | None:
    """:func:`identity` of each line of ``chunk`` (as tuples) and whether it has one."""
    try:
        rows = _DECODER.decode_lines(chunk)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None  # not an object per line: the exact path reads it (and says where)
    if len(rows) != count:
        return None
    field = {name: list(map(attrgetter(name), rows)) for name in _Fields.__struct_fields__}
    for key, aliases in _ALIASES.items():
        for alias in aliases:
            field[key] = _coalesce(field[key], field[alias])
    if None in field["role"]:
        field["role"] = ["sample" if v is None else v for v in field["role"]]
    values = []
    for key in IDENTITY:
        column = _normalized(field[key])
        if column is None:
            return None
        values.append(column)

    def present(key: str) -> np.ndarray:
        return np.fromiter(map(is_not, field[key], repeat(None)), dtype=bool, count=count)

    has = present("task_id") & (present("sample") | present("session") | present("attempt"))
    return list(zip(*values, strict=True)), has


def call_hashes(chunk: bytes, count: int) -> tuple[np.ndarray, np.ndarray] | None:
    """A seeded 64-bit hash of each line's :func:`identity` (equal identities, equal hashes)
    and whether it has one; None when a line needs the exact path.

    A plain line (as the runner writes them) is hashed as the :class:`_Call` msgspec decodes,
    in C (less than half the time of building the identity's tuple); any other line as the
    :class:`_Call` its identity equals when there is one (:func:`_as_call`), else as the tuple."""
    plain = _plain_identities(chunk, count)
    if plain is not None:
        calls, has = plain
        return np.fromiter(map(hash, calls), dtype=np.int64, count=count), has
    found = _identities(chunk, count)
    if found is None:
        return None
    idents, has = found
    return np.fromiter(map(_identity_hash, idents), dtype=np.int64, count=count), has


def call_identities(chunk: bytes, count: int) -> list[tuple[Any, ...]] | None:
    """:func:`identity`'s tuple of each line (for a line without one, what it has of it):
    what :func:`call_hashes` hashed, to compare two calls that share a hash."""
    plain = _plain_identities(chunk, count)
    if plain is not None:
        return [_call_identity(call) for call in plain[0]]
    found = _identities(chunk, count)
    return None if found is None else found[0]


def _identity_hash(ident: tuple[Any, ...]) -> int:
    call = _as_call(ident)
    return hash(ident if call is None else call)


def _as_call(ident: tuple[Any, ...]) -> _Call | None:
    """The :class:`_Call` whose identity is ``ident`` (ids text, counters whole numbers written
    as :func:`identity` writes them), or None when no plain line has this identity."""
    run_id, task_id, arm, session, sample, round_, attempt, role, call_id, judged = ident
    texts = (run_id, arm, session, call_id, judged)
    if type(task_id) is not str or type(role) is not str:
        return None
    if not all(v is None or type(v) is str for v in texts):
        return None
    counters: list[int | None] = []
    for value in (sample, round_, attempt):
        number = _whole_number(value)
        if number is False:
            return None
        counters.append(number)
    return _Call(
        task_id=task_id, run_id=run_id, arm=arm, session=session, sample=counters[0],
        round=counters[1], attempt=counters[2], role=role, call_id=call_id, judged=judged,
    )  # fmt: skip


def _whole_number(value: Any) -> int | None | bool:
    """A counter as a plain line holds it: None, or the int whose text ``value`` is (the text
    exactly as ``str`` writes that int, in 64 bits); False for anything else."""
    if value is None:
        return None
    if type(value) is not str:
        return False
    try:
        number = int(value)
    except ValueError:
        return False
    if str(number) != value or not -(1 << 63) <= number < 1 << 63:
        return False
    return number


def _call_identity(call: _Call) -> tuple[Any, ...]:
    """:func:`identity`'s tuple for a plain line's :class:`_Call`."""
    counters = (call.sample, call.round, call.attempt)
    sample, round_, attempt = (None if v is None else str(v) for v in counters)
    return (call.run_id, call.task_id, call.arm, call.session, sample, round_, attempt,
            call.role, call.call_id, call.judged)  # fmt: skip


def _coalesce(values: list[Any], alias: list[Any]) -> list[Any]:
    """``values``, with ``alias`` where a value is null (as :func:`_get` reads a row)."""
    if None not in values or alias.count(None) == len(alias):
        return values
    return [a if v is None else v for v, a in zip(values, alias, strict=True)]


def _normalized(values: list[Any]) -> list[Any] | None:
    """The column as :func:`identity` writes it (numbers as text), or None for the exact path."""
    kinds = set(map(type, values))
    if kinds <= _SIMPLE:
        return values
    if dict in kinds or list in kinds:
        return None  # nested numbers may decode differently: leave them to the exact path
    if int in kinds:
        ints = [v for v in values if type(v) is int]
        if min(ints) < _INT_RANGE[0] or max(ints) > _INT_RANGE[1]:
            return None  # the line-by-line reader sees a float here
    if type(None) not in kinds and not kinds & _SIMPLE:
        return list(map(str, values))  # numbers only (the usual sample, round, attempt)
    return [str(v) if type(v) in (int, float) else v for v in values]
