"""Fold any ledgers batch by batch with the duplicate rules: memory grows with distinct calls.

:func:`eloledger.ledger.tally.stream_tally` streams one file in writing order, where no row can
repeat another. Everything else (several files, no ``ts``, unordered or repeated ``ts``) used to
be read whole for the duplicate check; here it streams too. Each row leaves behind only what
the rules need to recognise a later repeat of it:

* its line as two seeded 64-bit hashes (Python's keyed SipHash of the stripped line, and of
  the line without its opening brace: two independent digests of the same bytes) and its place;
* with several files, its call identity the same way (the tuple :func:`dedupe.identity` makes).

That is 20 bytes per distinct line (and per distinct call), kept in sorted numpy runs split
into buckets by the hash's top bits (merging a bucket never copies the whole set). The rules
are :class:`eloledger.ledger.dedupe.DuplicateFinder`'s, applied in reading order: a line
repeats the first identical line anywhere; a call repeats the first call with its identity in
an earlier file. The warning is the same (count and first three pairs); only those three pairs
are kept. A line only the exact reader reads (blank, NaN, an odd type) raises
:class:`NeedsExactPath` and the caller reads the files whole, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.ledger.columns import Factor, NeedsExactPath, alias_swaps
from eloledger.ledger.dedupe import _SHOW, _identities, duplicate_message

_BATCH_BYTES = 4 << 20
_BUCKET_BITS = 4  # 16 buckets: merging the biggest run of one copies a sixteenth of the set
_SALT = "\x00eloledger-identity-check"


class SeenKeys:
    """Distinct (key, check) pairs of int64 hashes, each with the int64 place it was first
    seen; sorted runs per bucket, merged when a run is no bigger than half the one before."""

    def __init__(self) -> None:
        self.runs: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [
            [] for _ in range(1 << _BUCKET_BITS)
        ]
        self.size = 0

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each key: whether it was seen, its check and its place (0 where not seen)."""
        found = np.zeros(len(keys), dtype=bool)
        checks = np.zeros(len(keys), dtype=np.int64)
        places = np.zeros(len(keys), dtype=np.int64)
        bucket = _bucket(keys)
        for b in np.unique(bucket).tolist():
            rows = np.flatnonzero(bucket == b)
            mine = keys[rows]
            for run_keys, run_checks, run_places in self.runs[b]:
                at = np.minimum(np.searchsorted(run_keys, mine), len(run_keys) - 1)
                hit = run_keys[at] == mine
                if hit.any():
                    found[rows[hit]] = True
                    checks[rows[hit]] = run_checks[at[hit]]
                    places[rows[hit]] = run_places[at[hit]]
        return found, checks, places

    def add(self, keys: np.ndarray, checks: np.ndarray, places: np.ndarray) -> None:
        """Add keys not seen before (distinct among themselves too)."""
        bucket = _bucket(keys)
        order = np.lexsort((keys, bucket))
        keys, checks, places, bucket = keys[order], checks[order], places[order], bucket[order]
        bounds = np.searchsorted(bucket, np.arange((1 << _BUCKET_BITS) + 1))
        for b in range(1 << _BUCKET_BITS):
            lo, hi = int(bounds[b]), int(bounds[b + 1])
            if lo == hi:
                continue
            runs = self.runs[b]
            runs.append((keys[lo:hi].copy(), checks[lo:hi].copy(), places[lo:hi].copy()))
            while len(runs) > 1 and len(runs[-2][0]) <= 2 * len(runs[-1][0]):
                runs.append(_merge(runs.pop(-2), runs.pop()))
        self.size += len(keys)


def _bucket(keys: np.ndarray) -> np.ndarray:
    return (keys.view(np.uint64) >> np.uint64(64 - _BUCKET_BITS)).astype(np.int64)


def _merge(
    a: tuple[np.ndarray, np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two sorted runs with no key in common, as one sorted run."""
    at = np.searchsorted(a[0], b[0]) + np.arange(len(b[0]))
    from_a = np.ones(len(a[0]) + len(b[0]), dtype=bool)
    from_a[at] = False
    out = []
    for x, y in zip(a, b, strict=True):
        merged = np.empty(len(from_a), dtype=np.int64)
        merged[at] = y
        merged[from_a] = x
        out.append(merged)
    return out[0], out[1], out[2]


def _hashes(items: Sequence[Any], check: Callable[[Any], Any]) -> tuple[np.ndarray, np.ndarray]:
    """(Python's seeded hash of each item, of ``check(item)``) as int64 arrays."""
    keys = np.fromiter(map(hash, items), dtype=np.int64, count=len(items))
    checks = np.fromiter(map(hash, map(check, items)), dtype=np.int64, count=len(items))
    return keys, checks


class Repeats:
    """The duplicate rules over batches of rows in reading order (see the module's doc)."""

    def __init__(self, sources: Sequence[Path]) -> None:
        self.sources = [str(s) for s in sources]
        self.lines = SeenKeys()
        self.calls = SeenKeys()  # calls of the earlier files
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # this file's calls
        self.count = 0
        self.shown: list[tuple[str, str]] = []

    def where(self, place: int) -> str:
        return f"{self.sources[place >> 40]}:{place & ((1 << 40) - 1)}"

    def keep(self, source: int, first_line: int, data: memoryview) -> np.ndarray:
        """The rows of ``data`` (whole lines, one row each) that repeat nothing seen before."""
        raw = bytes(data).split(b"\n")
        if raw and not raw[-1]:
            raw.pop()
        lines = list(map(bytes.strip, raw))
        places = (source << 40) + first_line + np.arange(len(lines), dtype=np.int64)
        keys, checks = _hashes(lines, _without_brace)
        first = _firsts(keys, checks)
        seen, seen_checks, seen_places = self.lines.lookup(keys)
        if (seen & (seen_checks != checks)).any():
            raise NeedsExactPath  # two different lines share a 64-bit hash: be exact
        repeat_of = np.where(seen, seen_places, places[first])
        repeat = seen | (first != np.arange(len(lines)))
        new = ~seen & ~repeat
        self.lines.add(keys[new], checks[new], places[new])
        if len(self.sources) > 1:
            repeat, repeat_of = self._calls(data, len(lines), places, repeat, repeat_of)
        self._record(places[repeat], repeat_of[repeat])
        return ~repeat

    def _calls(
        self,
        data: memoryview,
        count: int,
        places: np.ndarray,
        repeat: np.ndarray,
        repeat_of: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows whose call an earlier file recorded (rows that repeat a line excepted)."""
        found = _identities(bytes(data), count)
        if found is None:
            raise NeedsExactPath
        idents, has = found
        fresh = np.flatnonzero(~repeat & has)
        if not len(fresh):
            return repeat, repeat_of
        mine = [idents[i] for i in fresh.tolist()]
        keys, checks = _hashes(mine, _salted)
        seen, seen_checks, seen_places = self.calls.lookup(keys)
        if (seen & (seen_checks != checks)).any():
            raise NeedsExactPath
        repeat, repeat_of = repeat.copy(), repeat_of.copy()
        repeat[fresh[seen]] = True
        repeat_of[fresh[seen]] = seen_places[seen]
        self.pending.append((keys[~seen], checks[~seen], places[fresh[~seen]]))
        return repeat, repeat_of

    def end_of_file(self) -> None:
        """This file's calls become "recorded by an earlier file" for the next ones (a call
        repeated inside one file is not a duplicate: another tool may reuse its ids)."""
        if not self.pending:
            return
        keys, checks, places = (np.concatenate(x) for x in zip(*self.pending, strict=True))
        self.pending = []
        seen, seen_checks, _ = self.calls.lookup(keys)
        if (seen & (seen_checks != checks)).any():
            raise NeedsExactPath
        keys, checks, places = keys[~seen], checks[~seen], places[~seen]
        first = _firsts(keys, checks)
        new = first == np.arange(len(keys))
        self.calls.add(keys[new], checks[new], places[new])

    def _record(self, rows: np.ndarray, firsts: np.ndarray) -> None:
        self.count += len(rows)
        for row, first in zip(rows.tolist(), firsts.tolist(), strict=True):
            if len(self.shown) >= _SHOW:
                break
            self.shown.append((self.where(row), self.where(first)))

    def message(self) -> str | None:
        return duplicate_message(self.shown, total=self.count) if self.count else None


def _without_brace(line: bytes) -> bytes:
    return line[1:]  # every row's line opens with "{": distinct lines stay distinct


def _salted(ident: tuple[Any, ...]) -> tuple[Any, ...]:
    return (_SALT, *ident)


def _firsts(keys: np.ndarray, checks: np.ndarray) -> np.ndarray:
    """For each position, the first position with the same key (its check must match)."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    first = first[inverse.reshape(-1)]
    if (checks[first] != checks).any():
        raise NeedsExactPath
    return first


def batches(path: Path, end: int) -> Iterator[tuple[int, memoryview]]:
    """(first line number, whole lines) of ``[0, end)``, a few MB at a time."""
    from eloledger.ledger.tally import _line_length

    buffer = bytearray(_BATCH_BYTES)
    number = 1
    with open(path, "rb") as fh, memoryview(buffer) as whole:
        pos = 0
        while pos < end:
            fh.seek(pos)
            data: bytes | bytearray = buffer
            size = fh.readinto(whole[: min(_BATCH_BYTES, end - pos)])
            if not size:
                raise NeedsExactPath  # the file shrank since we looked
            cut = size if pos + size == end else buffer.rfind(b"\n", 0, size) + 1
            if cut == 0:  # one line longer than a batch
                data = fh.read(_line_length(fh, pos, end))
                cut = len(data)
            with memoryview(data) as view, view[:cut] as lines:
                yield number, lines
            number += data.count(b"\n", 0, cut) + (0 if data[cut - 1] == 10 else 1)
            pos += cut


def _kept(batch: Mapping[str, Any], keep: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, column in batch.items():
        out[name] = Factor(column.codes[keep], column.levels) if isinstance(column, Factor) else column[keep]  # fmt: skip
    return out


def fold_files(
    paths: Sequence[Path], names: Sequence[str], new: Callable[[], Any]
) -> tuple[Any, list[str], Callable[[int], str]]:
    """Fold ``paths`` in order into ``new()`` (a TokenTally), repeats left out: the tally, the
    reader's warnings (torn tails, then the duplicate warning) and the ``file:line`` of the
    tally's evidence rows. NeedsExactPath if a line needs the exact reader."""
    from eloledger.ledger.reader import _inspect, _torn_message
    from eloledger.ledger.tally import _decode

    tally = new()
    repeats = Repeats(paths)
    warnings: list[str] = []
    located: dict[int, str] = {}
    for source, path in enumerate(paths):
        end, torn = _inspect(path)
        swaps, lines = None, 0
        for number, data in batches(path, end):
            if swaps is None:
                first = bytes(data[: 1 << 16]).split(b"\n", 1)[0]
                swaps = alias_swaps(first, names)
            columns, length, load = _decode(data, names, swaps)
            keep = repeats.keep(source, number, data)
            numbers = (number + np.flatnonzero(keep)).tolist()
            before = tally.rows
            marks = (tally.odd[1], tally.unequal[1])
            kept = _kept(columns, keep)
            tally.fold(kept, int(keep.sum()), functools.partial(_kept_load, load, keep))
            for mark, seen in zip(marks, (tally.odd, tally.unequal), strict=True):
                if mark < 0 <= seen[1]:
                    located[seen[1]] = f"{path}:{numbers[seen[1] - before]}"
            lines += length
        repeats.end_of_file()
        if torn:
            warnings.append(_torn_message(path, lines + 1, torn))
    tally.tidy()
    message = repeats.message()
    return tally, [*warnings, *([message] if message else [])], located.__getitem__


def _kept_load(load: Callable[[str], Any], keep: np.ndarray, name: str) -> Any:
    column = load(name)
    return Factor(column.codes[keep], column.levels) if isinstance(column, Factor) else column[keep]


__all__ = ["Repeats", "SeenKeys", "fold_files"]
