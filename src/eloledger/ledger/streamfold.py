"""Fold any ledgers batch by batch with the duplicate rules: memory grows with distinct calls.

:func:`eloledger.ledger.tally.stream_tally` streams one file in writing order, where no row can
repeat another. Everything else (several files, no ``ts``, unordered or repeated ``ts``) used to
be read whole for the duplicate check; here it streams too, with the rules of
:mod:`eloledger.ledger.repeats` (8 bytes kept a distinct line or call).

Big files are folded in slices by worker processes (fork, Linux), each slice against nothing
seen before it, and merged in order; several files so one after another, until one repeats a
row of an earlier one. From that file on the fold goes on in one process, in order, from the
keys the parallel slices left behind. A line only the exact reader reads (blank, NaN, an odd
type) raises :class:`NeedsExactPath` and the caller reads the files whole, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.ledger.answered import NEEDLE
from eloledger.ledger.batches import BATCH_BYTES, decode_batch, read_batches
from eloledger.ledger.columns import Factor, alias_swaps
from eloledger.ledger.dedupe import _SHOW
from eloledger.ledger.repeats import _SLICE, Repeats
from eloledger.ledger.slices import read_slices, stop_if_told

_BATCH_BYTES = BATCH_BYTES  # (a test makes it tiny)
_EMPTY = np.zeros(0, dtype=np.int64)


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
        stop_if_told()
        whole = bytes(data)
        answered = answered or NEEDLE in whole
        if swaps is None:
            swaps = alias_swaps(bytes(data[: 1 << 16]).split(b"\n", 1)[0], names)
        keep = repeats.keep(source, first_line + number - 1, whole)  # (it counts the lines)
        columns, length, load = decode_batch(data, names, swaps, len(keep))
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
    slices at once, until one repeats a row of an earlier one (or its slices repeat each
    other's): how many were folded so. Each slice is folded against nothing; what it saw (the
    keys of its lines and calls) goes into ``folding.repeats``, so the in-order fold of the
    rest starts from there."""
    from concurrent.futures.process import BrokenProcessPool

    repeats = folding.repeats
    for source, path in enumerate(folding.paths):
        if source and _head_repeats(path, repeats):
            return source  # cat L L, overlapping shards: no use folding it apart first
        try:
            parts, end, torn = _in_slices(path, names, new, repeats.check_calls, count, smallest)
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
        return repeats.seen_before(bytes(view))
    return False


def _in_slices(
    path: Path,
    names: Sequence[str],
    new: Callable[[], Any],
    calls: bool,
    count: int,
    smallest: int,
) -> tuple[list[_Range], int, int]:
    """One file folded in ``count`` slices when it has ``smallest`` bytes or more (this
    process folds the first slice, and the workers are gone before the slices are merged):
    the slices in order, the file's end and its torn tail."""
    from eloledger.ledger.fastread import _split
    from eloledger.ledger.reader import _inspect

    end, torn = _inspect(path)
    bounds = _split(path, end, count) if end >= smallest else [(0, end)]
    read = functools.partial(_worker, path, names=names, new=new, calls=calls)
    return read_slices(read, bounds), end, torn


def _overlaps(parts: Sequence[_Range], repeats: Repeats) -> bool:
    """Whether a slice repeats a line of an earlier slice or file, or a call of an earlier
    file (then the file is folded again, in order, from what ``repeats`` holds now)."""
    for k, part in enumerate(parts):
        if repeats.lines.lookup(part.line_keys).any():
            return True
        if any(_any_in(part.line_keys, earlier.line_keys) for earlier in parts[:k]):
            return True
        if repeats.calls.lookup(part.calls).any():
            return True
    return False


def _commit(
    folding: _Folding, source: int, path: Path, parts: Sequence[_Range], end: int, torn: int
) -> None:
    """Add a file's slices to ``folding`` in order: the tally, the repeats found, and (unless
    it is the last file, which no later one can repeat) the hashes of its lines and calls."""
    from eloledger.ledger.reader import _torn_message

    repeats, tally = folding.repeats, folding.tally
    keep = repeats.needed_later(source)
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
            repeats.remember_calls(part.calls)
        offset += part.lines
    repeats.end_of_file()
    folding.ranges.append((source, path, 0, end))
    if torn:
        folding.warnings.append(_torn_message(path, offset + 1, torn))


def _any_in(keys: np.ndarray, sorted_keys: np.ndarray) -> bool:
    """Whether any of ``keys`` is in ``sorted_keys``, a slice of ``keys`` at a time (two
    slices' millions of keys: arrays of a few MB, not twice their size)."""
    if not len(sorted_keys):
        return False
    for start in range(0, len(keys), _SLICE):
        mine = keys[start : start + _SLICE]
        at = np.minimum(np.searchsorted(sorted_keys, mine), len(sorted_keys) - 1)
        if (sorted_keys[at] == mine).any():
            return True
    return False


__all__ = ["Folded", "fold_files"]
