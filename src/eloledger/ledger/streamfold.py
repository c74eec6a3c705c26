"""Fold any ledgers batch by batch with the duplicate rules: memory grows with distinct calls.

:func:`eloledger.ledger.tally.stream_tally` streams one file in writing order, where no row can
repeat another. Everything else (several files, no ``ts``, unordered or repeated ``ts``) used to
be read whole for the duplicate check; here it streams too. Each row leaves behind only what
the rules need to recognise a later repeat of it:

* its line: Python's seeded 64-bit hash (SipHash) of the stripped line, 8 bytes. A line whose
  hash was seen is left out at once; when the files are folded, :meth:`Repeats.settle` reads
  them again (only if anything was left out so), finds the first line with each such hash and
  checks every later one against it byte for byte, so a hash collision can only send the read
  to the exact path;
* with several files, its call identity (the tuple :func:`dedupe.identity` makes): its seeded
  hash, 8 bytes (none for the last file's calls: no later file can repeat them). A row whose
  call an earlier file recorded is left out at once; :meth:`Repeats.settle` reads the files
  again (only if that happened) and checks that every row with that hash records the same
  call.

The hashes are kept in sorted numpy runs split into buckets by the hash's top bits (merging a
bucket never copies the whole set). The rules
are :class:`eloledger.ledger.dedupe.DuplicateFinder`'s, applied in reading order: a line
repeats the first identical line anywhere; a call repeats the first call with its identity in
an earlier file. The warning is the same (count and first three pairs); only those three pairs
are kept. A line only the exact reader reads (blank, NaN, an odd type) raises
:class:`NeedsExactPath` and the caller reads the files whole, as before.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.ledger.batches import BATCH_BYTES, batch_lines, decode_batch, read_batches
from eloledger.ledger.columns import Factor, NeedsExactPath, alias_swaps
from eloledger.ledger.dedupe import _SHOW, _identities, duplicate_message
from eloledger.ledger.reader import MAX_DEPTH, _depth_over, _too_deep

_BATCH_BYTES = BATCH_BYTES  # (a test makes it tiny)
_BUCKET_BITS = 4  # 16 buckets: merging the biggest run of one copies a sixteenth of the set
_EMPTY = np.zeros(0, dtype=np.int64)
_ANSWERED = b'"model_answered"'


class SeenKeys:
    """Distinct int64 keys (hashes), each with ``payloads`` int64 values (a second hash, the
    place it was first seen); sorted runs per bucket, merged when a run is no bigger than half
    the one before."""

    def __init__(self, payloads: int = 0) -> None:
        self.payloads = payloads
        self.runs: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(1 << _BUCKET_BITS)]
        self.size = 0

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, ...]:
        """For each key: whether it was seen, then each of its payloads (0 where not seen)."""
        found = np.zeros(len(keys), dtype=bool)
        values = [np.zeros(len(keys), dtype=np.int64) for _ in range(self.payloads)]
        bucket = _bucket(keys)
        for b in np.unique(bucket).tolist():
            rows = np.flatnonzero(bucket == b)
            mine = keys[rows]
            for run_keys, *run_values in self.runs[b]:
                at = np.minimum(np.searchsorted(run_keys, mine), len(run_keys) - 1)
                hit = run_keys[at] == mine
                if hit.any():
                    found[rows[hit]] = True
                    for value, run_value in zip(values, run_values, strict=True):
                        value[rows[hit]] = run_value[at[hit]]
        return (found, *values)

    def drain(self) -> np.ndarray:
        """Every key, sorted, the store emptied as they are copied out (a worker's keys go
        back to the parent: the peak is the keys once and a bucket, not the keys twice)."""
        out = np.empty(self.size, dtype=np.int64)
        at = 0
        half = 1 << (_BUCKET_BITS - 1)  # buckets with the sign bit set sort first as int64
        for b in [*range(half, 2 * half), *range(half)]:
            runs, self.runs[b] = self.runs[b], []
            while len(runs) > 1:
                runs.append(_merge(runs.pop(-2), runs.pop()))
            if runs:
                out[at : at + len(runs[0][0])] = runs[0][0]
                at += len(runs[0][0])
        self.size = 0
        return out[:at]

    def add(self, keys: np.ndarray, *payloads: np.ndarray) -> None:
        """Add keys not seen before (distinct among themselves too)."""
        bucket = _bucket(keys)
        order = np.lexsort((keys, bucket))
        columns = [keys[order], *(p[order] for p in payloads)]
        bounds = np.searchsorted(bucket[order], np.arange((1 << _BUCKET_BITS) + 1))
        for b in range(1 << _BUCKET_BITS):
            lo, hi = int(bounds[b]), int(bounds[b + 1])
            if lo == hi:
                continue
            runs = self.runs[b]
            runs.append(tuple(column[lo:hi].copy() for column in columns))
            while len(runs) > 1 and len(runs[-2][0]) <= 2 * len(runs[-1][0]):
                runs.append(_merge(runs.pop(-2), runs.pop()))
        self.size += len(keys)


def _bucket(keys: np.ndarray) -> np.ndarray:
    return (keys.view(np.uint64) >> np.uint64(64 - _BUCKET_BITS)).astype(np.int64)


def _merge(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
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
    return tuple(out)


def call_keys(idents: Sequence[tuple[Any, ...]]) -> np.ndarray:
    """Python's seeded hash of each call identity, never 0 (0 marks "no call" in arrays)."""
    keys = np.fromiter(map(hash, idents), dtype=np.int64, count=len(idents))
    keys[keys == 0] = 1
    return keys


class Repeats:
    """The duplicate rules over batches of rows in reading order (see the module's doc).

    ``calls``: look for calls repeated across files (default: when there are several).
    ``last_file_calls``: keep the last file's calls too (a worker hands them back); otherwise
    no later file can repeat them, and they are not stored (two shards: half the store)."""

    def __init__(
        self, sources: Sequence[Path], *, calls: bool | None = None, last_file_calls: bool = False
    ) -> None:
        self.sources = [str(s) for s in sources]
        self.check_calls = len(self.sources) > 1 if calls is None else calls
        self.last_file_calls = last_file_calls
        self.lines = SeenKeys()  # only the hashes: a repeat's first line is found by settle()
        self.calls = SeenKeys()  # the earlier files' calls (hashes: confirmed by settle())
        self.file_seen = SeenKeys()  # the calls this file recorded first
        self.count = 0
        self.shown: list[tuple[int, int]] = []  # (repeat, first) places
        self.unplaced: dict[int, int] = {}  # shown index -> its line's hash (first: settle())
        self.unplaced_calls: dict[int, int] = {}  # shown index -> its call's hash
        self.pending: list[np.ndarray] = []  # hashes of lines repeated from an earlier batch
        self.pending_calls: list[np.ndarray] = []  # hashes of calls an earlier file recorded

    def where(self, place: int) -> str:
        return f"{self.sources[place >> 40]}:{place & _LINE_MASK}"

    def keep(self, source: int, first_line: int, data: bytes) -> np.ndarray:
        """The rows of ``data`` (whole lines, one row each, the first being line
        ``first_line`` of file ``source``) that repeat nothing seen before.

        A line whose hash an earlier batch had is left out at once; that it is byte for byte
        the same line (and which line it repeats) is settled by :meth:`settle` at the end."""
        raw = batch_lines(data)
        count = len(raw)
        bytes_ = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(bytes_ == 10)
        lines = raw if _unpadded(bytes_, ends) else list(map(bytes.strip, raw))
        _refuse_deep(self.sources[source], first_line, raw, bytes_, ends)
        places = (source << 40) + first_line + np.arange(count, dtype=np.int64)
        keys = np.fromiter(map(hash, lines), dtype=np.int64, count=count)
        first = _firsts(keys)
        inside = np.flatnonzero(first != np.arange(count))
        pairs = zip(inside.tolist(), first[inside].tolist(), strict=True)
        if any(lines[i] != lines[j] for i, j in pairs):
            raise NeedsExactPath  # two different lines share a 64-bit hash: be exact
        (seen,) = self.lines.lookup(keys)
        if seen.any():
            self.pending.append(keys[seen])
        repeat_of = np.where(seen, -1, places[first])
        repeat = seen.copy()
        repeat[inside] = True
        self.lines.add(keys[~repeat])
        if self.check_calls:
            store = self.last_file_calls or source < len(self.sources) - 1
            calls = self._calls(data, count, repeat, store)
            repeat = repeat | (calls != 0)
            keys = np.where(calls != 0, calls, keys)  # a call repeat is placed by its call
        else:
            calls = np.zeros(count, dtype=np.int64)
        self._record(places[repeat], repeat_of[repeat], keys[repeat], calls[repeat] != 0)
        return ~repeat

    def settle(self, ranges: Sequence[tuple[int, Path, int, int]]) -> None:
        """Confirm what :meth:`keep` left out for a hash seen before: the lines (byte for
        byte, :meth:`_settle_lines`) and the calls (:meth:`_settle_calls`). ``ranges``:
        (source, file, start, end), what was folded, in order. Fills in the shown repeats'
        first places. NeedsExactPath on a mismatch: two different lines or calls shared a
        64-bit hash."""
        self._settle_lines(ranges)
        self._settle_calls(ranges)

    def _settle_lines(self, ranges: Sequence[tuple[int, Path, int, int]]) -> None:
        """Read ``ranges`` again in order, find the first line with each hash a left-out line
        had, and check every later one against it byte for byte (read back from the file)."""
        if not self.pending:
            return
        wanted = np.unique(np.concatenate(self.pending))
        first_place = np.full(len(wanted), -1, dtype=np.int64)
        first_start = np.zeros(len(wanted), dtype=np.int64)
        files = {source: path for source, path, _, _ in ranges}
        with contextlib.ExitStack() as stack:
            back = {s: stack.enter_context(open(p, "rb")) for s, p in files.items()}
            for source, path, start, end in ranges:
                for number, pos, view in read_batches(path, start, end, _BATCH_BYTES):
                    data = bytes(view)
                    lines = list(map(bytes.strip, batch_lines(data)))
                    keys = np.fromiter(map(hash, lines), dtype=np.int64, count=len(lines))
                    at = np.minimum(np.searchsorted(wanted, keys), len(wanted) - 1)
                    rows = np.flatnonzero(wanted[at] == keys)
                    if not len(rows):
                        continue
                    starts = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
                    starts = np.concatenate(([0], starts))
                    for row in rows.tolist():
                        slot = int(at[row])
                        if first_place[slot] < 0:
                            first_place[slot] = (source << 40) + number + row
                            first_start[slot] = pos + int(starts[row])
                            continue
                        fh = back[int(first_place[slot]) >> 40]
                        fh.seek(int(first_start[slot]))
                        if fh.readline().strip() != lines[row]:
                            raise NeedsExactPath
        for index, key in self.unplaced.items():
            slot = int(np.searchsorted(wanted, key))
            self.shown[index] = (self.shown[index][0], int(first_place[slot]))
        self.pending, self.unplaced = [], {}

    def _settle_calls(self, ranges: Sequence[tuple[int, Path, int, int]]) -> None:
        """Read ``ranges`` again in order, find the first row with each call hash a left-out
        row had, and check that every row with that hash records the same call."""
        if not self.pending_calls:
            return
        wanted = np.unique(np.concatenate(self.pending_calls))
        first_place = np.full(len(wanted), -1, dtype=np.int64)
        first_call: dict[int, tuple[Any, ...]] = {}
        for source, path, start, end in ranges:
            for number, _, view in read_batches(path, start, end, _BATCH_BYTES):
                data = bytes(view)
                found = _identities(data, len(batch_lines(data)))
                if found is None:
                    raise NeedsExactPath  # (the fold read these lines: the file changed)
                idents, has = found
                rows = np.flatnonzero(has)
                mine = [idents[i] for i in rows.tolist()]
                keys = call_keys(mine)
                at = np.minimum(np.searchsorted(wanted, keys), len(wanted) - 1)
                for k in np.flatnonzero(wanted[at] == keys).tolist():
                    slot = int(at[k])
                    if slot not in first_call:
                        first_call[slot] = mine[k]
                        first_place[slot] = (source << 40) + number + int(rows[k])
                    elif mine[k] != first_call[slot]:
                        raise NeedsExactPath
        for index, key in self.unplaced_calls.items():
            slot = int(np.searchsorted(wanted, key))
            self.shown[index] = (self.shown[index][0], int(first_place[slot]))
        self.pending_calls, self.unplaced_calls = [], {}

    def _calls(self, data: bytes, count: int, repeat: np.ndarray, store: bool) -> np.ndarray:
        """For each row whose call an earlier file recorded (rows that repeat a line
        excepted), the call's hash; 0 for the others. With ``store``, this file's new calls
        are kept for the files after it. Only hashes are kept: :meth:`settle` confirms."""
        found = _identities(data, count)
        if found is None:
            raise NeedsExactPath
        idents, has = found
        calls = np.zeros(count, dtype=np.int64)
        fresh = np.flatnonzero(~repeat & has)
        if not len(fresh):
            return calls
        mine = [idents[i] for i in fresh.tolist()]
        keys = call_keys(mine)
        (seen,) = self.calls.lookup(keys)
        if seen.any():
            self.pending_calls.append(keys[seen])
            calls[fresh[seen]] = keys[seen]
        if store:
            new = np.unique(keys[~seen])
            (known,) = self.file_seen.lookup(new)
            self.file_seen.add(new[~known])
        return calls

    def file_calls(self) -> np.ndarray:
        """The calls this file recorded (taken: the next file starts afresh)."""
        return self.file_seen.drain()

    def end_of_file(self) -> None:
        """This file's calls become "recorded by an earlier file" for the next ones (a call
        repeated inside one file is not a duplicate: another tool may reuse its ids). None of
        them is in :attr:`calls` yet (those were repeats), so their runs go in as they are."""
        for bucket in self.file_seen.runs:
            for run in bucket:
                self.calls.add(*run)
        self.file_seen = SeenKeys()

    def _record(
        self, rows: np.ndarray, firsts: np.ndarray, keys: np.ndarray, calls: np.ndarray
    ) -> None:
        """Count the repeats; keep the first few pairs (a first of -1: found by settle(),
        from the line's hash, or the call's where ``calls``)."""
        self.count += len(rows)
        room = _SHOW - len(self.shown)
        for row, first, key, call in zip(rows[:room].tolist(), firsts[:room].tolist(),
                                         keys[:room].tolist(), calls[:room].tolist(),
                                         strict=True):  # fmt: skip
            if call:
                self.unplaced_calls[len(self.shown)] = key
            elif first < 0:
                self.unplaced[len(self.shown)] = key
            self.shown.append((row, -1 if call else first))

    def message(self) -> str | None:
        if not self.count:
            return None
        shown = [(self.where(a), self.where(b)) for a, b in self.shown]
        return duplicate_message(shown, total=self.count)


_LINE_MASK = (1 << 40) - 1


_SPACE = np.array([32, 9, 13, 11, 12], dtype=np.uint8)  # what bytes.strip removes, but \n


def _unpadded(data: np.ndarray, ends: np.ndarray) -> bool:
    """No line of ``data`` (``ends``: its newlines) starts or ends with what ``bytes.strip``
    removes: then the lines need no strip one by one."""
    if not len(data):
        return True
    after = ends[ends + 1 < len(data)] + 1
    edges = np.concatenate((data[:1], data[-1:], data[ends[ends > 0] - 1], data[after]))
    return not np.isin(edges, _SPACE).any()


def _refuse_deep(
    source: str, first_line: int, raw: list[bytes], data: np.ndarray, ends: np.ndarray
) -> None:
    """The whole-file reader's depth rule (:func:`dedupe._refuse_deep`): msgspec skips an
    unknown field without building it, so a line of 100k nested brackets would pass as a row.
    Brackets are counted per line with numpy; only a line with more than MAX_DEPTH of them is
    scanned exactly."""
    opens = np.flatnonzero((data == 0x7B) | (data == 0x5B))
    if len(opens) <= MAX_DEPTH:
        return
    per_line = np.bincount(np.searchsorted(ends, opens), minlength=len(raw) + 1)
    for index in np.flatnonzero(per_line[: len(raw)] > MAX_DEPTH).tolist():
        if _depth_over(raw[index], MAX_DEPTH):
            raise _too_deep(f"{source}:{first_line + index}")


def _firsts(keys: np.ndarray, checks: np.ndarray | None = None) -> np.ndarray:
    """For each position, the first position with the same key (its check must match)."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    first = first[inverse.reshape(-1)]
    if checks is not None and (checks[first] != checks).any():
        raise NeedsExactPath
    return first


def _kept(column: Any, keep: np.ndarray) -> Any:
    return Factor(column.codes[keep], column.levels) if isinstance(column, Factor) else column[keep]


def _kept_load(load: Callable[[str], Any], keep: np.ndarray, name: str) -> Any:
    return _kept(load(name), keep)


@dataclass
class _Range:
    """A slice of whole lines folded: the tally, its lines, the ``(tally row, line)`` of its
    evidence rows, and the repeats it found (places counted from the slice's first line)."""

    tally: Any
    lines: int
    evidence: dict[int, int]
    repeats: Repeats
    answered: bool = False  # a line names ``model_answered`` (the answered-model warning)
    line_keys: np.ndarray = field(default_factory=lambda: _EMPTY)
    calls: np.ndarray = field(default_factory=lambda: _EMPTY)  # hashes of its calls


def _fold_range(
    path: Path,
    start: int,
    end: int,
    names: Sequence[str],
    tally: Any,
    repeats: Repeats,
    source: int,
    first_line: int,
) -> _Range:
    """Fold the lines of ``[start, end)`` into ``tally``, leaving out what ``repeats`` has
    seen; line numbers start at ``first_line``."""
    swaps, lines, evidence, answered = None, 0, {}, False
    for number, _pos, data in read_batches(path, start, end, _BATCH_BYTES):
        whole = bytes(data)
        answered = answered or _ANSWERED in whole
        if swaps is None:
            swaps = alias_swaps(bytes(data[: 1 << 16]).split(b"\n", 1)[0], names)
        columns, length, load = decode_batch(data, names, swaps)
        keep = repeats.keep(source, first_line + number - 1, whole)
        before, marks = tally.rows, (tally.odd[1], tally.unequal[1])
        kept = {name: _kept(column, keep) for name, column in columns.items()}
        tally.fold(kept, int(keep.sum()), functools.partial(_kept_load, load, keep))
        for mark, seen in zip(marks, (tally.odd, tally.unequal), strict=True):
            if mark < 0 <= seen[1]:
                row = int(np.flatnonzero(keep)[seen[1] - before])
                evidence[seen[1]] = first_line + number - 1 + row
        lines += length
    tally.tidy()
    return _Range(tally, lines, evidence, repeats, answered)


def _worker(
    path: Path, start: int, end: int, names: Sequence[str], new: Any, calls: bool
) -> _Range:
    """A slice folded in a worker process, against nothing seen before it; what goes back is
    the tally, the repeats found, and the keys of its distinct lines and calls."""
    repeats = Repeats([path], calls=calls, last_file_calls=True)
    folded = _fold_range(path, start, end, names, new(), repeats, 0, 1)
    repeats.settle([(0, path, start, end)])
    folded.line_keys = repeats.lines.drain()
    folded.calls = repeats.file_calls() if calls else _EMPTY
    return folded


@dataclass
class Folded:
    """What :func:`fold_files` gives: the tally, the reader's warnings (torn tails, then the
    duplicate warning), the ``file:line`` of the tally's evidence rows, and whether any line
    names ``model_answered`` (else the answered-model scan has nothing to find)."""

    tally: Any
    warnings: list[str]
    where: Callable[[int], str]
    answered: bool


@dataclass
class _Folding:
    """The files folded so far, whichever way: the in-order fold goes on from here."""

    paths: Sequence[Path]
    tally: Any
    repeats: Repeats
    warnings: list[str] = field(default_factory=list)
    located: dict[int, str] = field(default_factory=dict)
    answered: bool = False
    ranges: list[tuple[int, Path, int, int]] = field(default_factory=list)

    def fold_in_order(self, source: int, names: Sequence[str]) -> None:
        """Fold file ``source`` in one pass against everything folded before it."""
        from eloledger.ledger.reader import _inspect, _torn_message

        path = self.paths[source]
        end, torn = _inspect(path)
        folded = _fold_range(path, 0, end, names, self.tally, self.repeats, source, 1)
        self.ranges.append((source, path, 0, end))
        self.answered = self.answered or folded.answered
        self.located |= {row: f"{path}:{line}" for row, line in folded.evidence.items()}
        self.repeats.end_of_file()
        if torn:
            self.warnings.append(_torn_message(path, folded.lines + 1, torn))

    def result(self) -> Folded:
        self.repeats.settle(self.ranges)
        message = self.repeats.message()
        warnings = self.warnings + ([message] if message else [])
        return Folded(self.tally, warnings, self.located.__getitem__, self.answered)


def fold_files(
    paths: Sequence[Path], names: Sequence[str], new: Callable[[], Any], workers: int | None = None
) -> Folded:
    """Fold ``paths`` in order into ``new()`` (a TokenTally), repeats left out: the tally, the
    reader's warnings (torn tails, then the duplicate warning) and the ``file:line`` of the
    tally's evidence rows. NeedsExactPath if a line needs the exact reader.

    Big files are folded in slices by worker processes, each slice against nothing seen
    before it. From the first file that repeats an earlier file's row (or whose slices
    repeat each other's: ``cat L L``), the files are folded in one process, in order, which
    applies the rules exactly; the files before it are not folded again."""
    from eloledger.ledger.fastread import _PARALLEL_MIN_BYTES, _auto_workers

    sizes = [p.stat().st_size for p in paths]
    count = workers if workers is not None else _auto_workers(max(sizes, default=0))
    folding = _Folding(paths, new(), Repeats(paths))
    smallest = 0 if workers else _PARALLEL_MIN_BYTES  # asked for: every file is split
    done = _fold_parallel(folding, names, new, count, smallest) if count > 1 else 0
    for source in range(done, len(paths)):
        folding.fold_in_order(source, names)
    return folding.result()


def _fold_parallel(
    folding: _Folding, names: Sequence[str], new: Callable[[], Any], count: int, smallest: int
) -> int:
    """Fold the files one after another, each of ``smallest`` bytes or more in ``count``
    slices at once, until one
    repeats a row of an earlier one (or its slices repeat each other's): how many were
    folded so. Each slice is folded against nothing; what it saw (the keys of its lines and
    calls) goes into ``folding.repeats``, so the in-order fold of the rest starts from there."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    repeats = folding.repeats
    context = multiprocessing.get_context("fork")
    for source, path in enumerate(folding.paths):
        if source and _head_repeats(path, repeats):
            return source  # cat L L, overlapping shards: no use folding it apart first
        try:
            slices = (count, smallest, context)
            parts, end, torn = _in_slices(path, names, new, repeats.check_calls, slices)
        except BrokenProcessPool:
            return source
        if _overlaps(parts, repeats):
            return source
        _commit(folding, source, path, parts, end, torn)
    return len(folding.paths)


def _head_repeats(path: Path, repeats: Repeats) -> bool:
    """Whether the file's first batch repeats a line or a call of the files folded before:
    where ``cat L L`` and overlapping shards repeat rows (found before the work, not after)."""
    for _, _, view in read_batches(path, 0, path.stat().st_size, _BATCH_BYTES):
        data = bytes(view)
        stripped = list(map(bytes.strip, batch_lines(data)))
        keys = np.fromiter(map(hash, stripped), dtype=np.int64, count=len(stripped))
        if repeats.lines.lookup(keys)[0].any():
            return True
        found = _identities(data, len(stripped)) if repeats.check_calls else None
        if found is None:
            return False
        idents, has = found
        mine = [ident for ident, flag in zip(idents, has.tolist(), strict=True) if flag]
        return bool(repeats.calls.lookup(call_keys(mine))[0].any())
    return False


def _in_slices(
    path: Path, names: Sequence[str], new: Callable[[], Any], calls: bool, slices: tuple
) -> tuple[list[_Range], int, int]:
    """One file folded in ``count`` slices when it has ``smallest`` bytes or more (``slices``:
    count, smallest, the fork context; this process folds the first slice, and the workers
    are gone before the slices are merged): the slices in order, the file's end and its torn
    tail."""
    from concurrent.futures import ProcessPoolExecutor

    from eloledger.ledger.fastread import _split
    from eloledger.ledger.reader import _inspect

    count, smallest, context = slices
    end, torn = _inspect(path)
    bounds = _split(path, end, count) if end >= smallest else [(0, end)]
    if len(bounds) == 1:  # a small file, or one line longer than a slice
        return [_worker(path, 0, end, names, new, calls)], end, torn
    with ProcessPoolExecutor(len(bounds) - 1, mp_context=context) as pool:
        futures = [pool.submit(_worker, path, a, b, names, new, calls) for a, b in bounds[1:]]
        try:
            parts = [_worker(path, *bounds[0], names, new, calls)]
            parts += [future.result() for future in futures]
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return parts, end, torn


def _overlaps(parts: Sequence[_Range], repeats: Repeats) -> bool:
    """Whether a slice repeats a line of an earlier slice or file, or a call of an earlier
    file (then the file is folded again, in order, from what ``repeats`` holds now)."""
    for k, part in enumerate(parts):
        if repeats.lines.lookup(part.line_keys)[0].any():
            return True
        if any(_any_in(part.line_keys, earlier.line_keys) for earlier in parts[:k]):
            return True
        if repeats.calls.lookup(part.calls)[0].any():
            return True
    return False


def _commit(
    folding: _Folding, source: int, path: Path, parts: Sequence[_Range], end: int, torn: int
) -> None:
    """Add a file's slices to ``folding`` in order: the tally, the repeats found, and (unless
    it is the last file, which no later one can repeat) the hashes of its lines and calls."""
    from eloledger.ledger.reader import _torn_message

    repeats, tally = folding.repeats, folding.tally
    keep = source < len(folding.paths) - 1
    offset = 0
    for part in parts:
        folding.answered = folding.answered or part.answered
        shift = (source << 40) + offset
        repeats.shown = (repeats.shown + [(a + shift, b + shift) for a, b in part.repeats.shown])[:_SHOW]  # fmt: skip
        repeats.count += part.repeats.count
        rows = tally.rows
        tally.merge(part.tally)
        folding.located |= {rows + r: f"{path}:{offset + n}" for r, n in part.evidence.items()}
        if keep:
            repeats.lines.add(part.line_keys)
            (known,) = repeats.file_seen.lookup(part.calls)
            repeats.file_seen.add(part.calls[~known])
        offset += part.lines
    repeats.end_of_file()
    folding.ranges.append((source, path, 0, end))
    if torn:
        folding.warnings.append(_torn_message(path, offset + 1, torn))


def _any_in(keys: np.ndarray, sorted_keys: np.ndarray) -> bool:
    if not len(keys) or not len(sorted_keys):
        return False
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return bool((sorted_keys[at] == keys).any())


__all__ = ["Repeats", "SeenKeys", "fold_files"]
