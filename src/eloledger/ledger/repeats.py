"""The duplicate rules over any ledgers, in memory that does not grow with the files.

Folding a batch looks nothing up. :class:`RowKeys` writes each row's keys to a spill on disk
(:mod:`eloledger.ledger.keyspill`): its line's hash (Python's seeded 64-bit hash of the stripped
line) and, with several files, its call's hash (:func:`eloledger.ledger.dedupe.call_hashes`),
each with the row and its line's byte offset. Once every file is folded, :func:`find_repeats`
reads the spill one part (a 64th of the hashes) at a time and finds, by hash, what repeats:

* a line repeats the first line with its hash, anywhere;
* a row that repeats no line repeats a call when the first row with its call's hash is in an
  earlier file (a call repeated inside one file is not a duplicate: another tool may reuse its
  ids).

These are :class:`eloledger.ledger.dedupe.DuplicateFinder`'s rules, applied in reading order.
:func:`confirm` then reads each repeat and its first row back from the files and checks the
lines byte for byte (or the calls' identities), so two lines or calls that share a 64-bit hash
can only send the read to the exact path (:class:`NeedsExactPath`).

Rows are numbered ``piece << 40`` + their line in the piece, from 0: a piece is a range of
whole lines of one file, folded by one process (:mod:`eloledger.ledger.streamfold`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from eloledger.ledger.batches import BATCH_BYTES, batch_lines
from eloledger.ledger.columns import NeedsExactPath
from eloledger.ledger.dedupe import call_hashes, call_identities
from eloledger.ledger.keyspill import PARTS, SpillWriter, read_part
from eloledger.ledger.reader import (
    MAX_DEPTH,
    _depth_over,
    _too_deep,
    none_too_deep,
    open_brackets,
)

PIECE_SHIFT = 40
LINE_MASK = (1 << PIECE_SHIFT) - 1


def line_keys(lines: Sequence[bytes]) -> np.ndarray:
    """Python's seeded hash of each (stripped) line."""
    return np.fromiter(map(hash, lines), dtype=np.int64, count=len(lines))


class RowKeys:
    """What one folding process (``task``, its place in reading order) writes to the spill."""

    def __init__(self, folder: Path, task: int, calls: bool) -> None:
        self.lines = SpillWriter(folder, _name("lines", task))
        self.calls = SpillWriter(folder, _name("calls", task)) if calls else None

    def add(self, path: Path, piece: int, first: int, pos: int, data: bytes) -> int:
        """Write the keys of the rows of ``data`` (whole lines, from byte ``pos`` of ``path``;
        the first is line ``first`` of piece ``piece``, from 0): how many rows it holds.
        A line nested too deeply is a ``file:line`` error here, as in the exact reader."""
        return self.add_files(data, [(path, piece, len(data))], first, pos)[0]

    def add_files(
        self, data: bytes, files: Sequence[tuple[Path, int, int]], first: int = 0, pos: int = 0
    ) -> list[int]:
        """:meth:`add` for several pieces' lines at once: ``data`` is their whole lines one
        after another, ``files`` each one's ``(path, piece, bytes in data)`` (small files are
        keyed in one pass, not one each): how many rows each holds. ``first`` and ``pos``:
        where the first piece's lines start (the others', at 0)."""
        raw = batch_lines(data)
        count = len(raw)
        bytes_ = np.frombuffer(data, dtype=np.uint8)
        ends = _newlines(raw, data)
        starts = np.concatenate(([0], ends[: count - 1] + 1))  # each line's offset in data
        edges = np.cumsum([0, *(size for _, _, size in files)])
        owner = np.searchsorted(edges, starts, side="right") - 1  # each line's piece
        counts = np.bincount(owner, minlength=len(files))
        firsts = np.cumsum([0, *counts[:-1]])  # each piece's first line in data
        starts = starts - edges[owner] + np.where(owner == 0, pos, 0)  # offsets in their files
        deep = _deep_line(raw, bytes_, ends)
        if deep is not None:
            path = files[int(owner[deep])][0]
            raise _too_deep(f"{path}:{_line_number(path, int(starts[deep]))}")
        lines = raw if _unpadded(bytes_, ends) else list(map(bytes.strip, raw))
        local = np.arange(count, dtype=np.int64) - firsts[owner] + np.where(owner == 0, first, 0)
        pieces = np.array([piece for _, piece, _ in files], dtype=np.int64)[owner]
        rows = (pieces << PIECE_SHIFT) + local
        self.lines.add(line_keys(lines), rows, starts)
        if self.calls is not None:
            found = call_hashes(data, count)
            if found is None:
                raise NeedsExactPath
            hashes, has = found
            self.calls.add(hashes[has], rows[has], starts[has])
        return counts.tolist()

    def close(self) -> None:
        self.lines.close()
        if self.calls is not None:
            self.calls.close()


def _newlines(lines: list[bytes], data: bytes) -> np.ndarray:
    """Where each newline of ``data`` is, from its ``lines``' lengths (faster than looking
    at every byte again): ``np.flatnonzero(data == 10)``."""
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    ends = np.cumsum(lengths + 1) - 1
    return ends if data.endswith(b"\n") else ends[:-1]


def _name(kind: str, task: int) -> str:
    return f"{kind}-{task:05d}"


@dataclass
class Repeated:
    """The rows that repeat an earlier one, sorted, each with the row it repeats, both lines'
    byte offsets, and whether it repeats a call (else a line)."""

    rows: np.ndarray
    firsts: np.ndarray
    at: np.ndarray
    first_at: np.ndarray
    call: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def confirmed(self, shown: int) -> Repeated:
        """What folding again and the warning need once :func:`confirm` is done: every row,
        and the rows the first ``shown`` repeat (the rest is let go)."""
        empty = self.rows[:0]
        return Repeated(self.rows, self.firsts[:shown].copy(), empty, empty, self.call[:0])


def lines_in_piece(rows: np.ndarray, piece: int) -> np.ndarray:
    """Of ``rows`` (sorted, as :class:`RowKeys` numbers them), the lines of piece ``piece``
    (from 0, sorted)."""
    lo, hi = np.searchsorted(rows, [piece << PIECE_SHIFT, (piece + 1) << PIECE_SHIFT])
    return rows[lo:hi] & LINE_MASK


def _none() -> Repeated:
    empty = np.zeros(0, dtype=np.int64)
    return Repeated(empty, empty, empty, empty, np.zeros(0, dtype=bool))


def _joined(parts: Sequence[Repeated]) -> Repeated:
    """The parts' repeats as one, sorted by row; each part's arrays are let go field by field
    (a flood of repeats, ``cat L L``, holds them once and a field, not twice)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return _none()
    order = np.argsort(np.concatenate([p.rows for p in parts]), kind="stable")
    fields = {}
    for name in ("rows", "firsts", "at", "first_at", "call"):
        fields[name] = np.concatenate([getattr(p, name) for p in parts])[order]
        for part in parts:
            setattr(part, name, fields[name][:0])
    return Repeated(**fields)


def find_repeats(folder: Path, tasks: int, piece_source: np.ndarray, calls: bool) -> Repeated:
    """The rows that repeat an earlier one (see the module's doc), found a part of the spill
    at a time. ``piece_source``: each piece's file, in reading order."""
    line_names = [_name("lines", task) for task in range(tasks)]
    lines = _joined([_line_repeats(read_part(folder, line_names, p)) for p in range(PARTS)])
    if not calls:
        return lines
    call_names = [_name("calls", task) for task in range(tasks)]
    found = [
        _call_repeats(read_part(folder, call_names, p), lines.rows, piece_source)
        for p in range(PARTS)
    ]
    return _joined([lines, *found])


def _grouped(records: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The records in hash order (reading order among equal hashes), and for each the index
    of the first record with its hash; None when no two records share a hash (most parts)."""
    keys = records[:, 0]
    if len(keys) < 2:
        return None
    ordered_keys = np.sort(keys)
    if not (ordered_keys[1:] == ordered_keys[:-1]).any():
        return None
    ordered = records[np.argsort(keys, kind="stable")]
    keys = ordered[:, 0]
    starts = np.concatenate(([True], keys[1:] != keys[:-1]))
    head = np.maximum.accumulate(np.where(starts, np.arange(len(keys)), 0))
    return ordered, head


def _repeated(ordered: np.ndarray, head: np.ndarray, later: np.ndarray, call: bool) -> Repeated:
    first = head[later]
    marks = np.full(len(later), call, dtype=bool)
    return Repeated(
        ordered[later, 1], ordered[first, 1], ordered[later, 2], ordered[first, 2], marks
    )


def _line_repeats(records: np.ndarray) -> Repeated:
    """Each line after the first with its hash."""
    grouped = _grouped(records)
    if grouped is None:
        return _none()
    ordered, head = grouped
    return _repeated(ordered, head, np.flatnonzero(head != np.arange(len(head))), call=False)


def _call_repeats(records: np.ndarray, line_rows: np.ndarray, piece_source: np.ndarray) -> Repeated:
    """Each row (not a line repeat) whose call's first row is in an earlier file."""
    if len(records) and len(line_rows):
        at = np.minimum(np.searchsorted(line_rows, records[:, 1]), len(line_rows) - 1)
        records = records[line_rows[at] != records[:, 1]]  # (line_rows: sorted)
    grouped = _grouped(records)
    if grouped is None:
        return _none()
    ordered, head = grouped
    source = piece_source[ordered[:, 1] >> PIECE_SHIFT]
    return _repeated(ordered, head, np.flatnonzero(source != source[head]), call=True)


def confirm(repeated: Repeated, piece_path: Sequence[Path]) -> None:
    """Read every repeat and its first row back, :data:`_CONFIRM` at a time: NeedsExactPath
    unless the lines are the same byte for byte (stripped), or, for a call, the two rows record
    the same call."""
    paths = [str(path) for path in piece_path]
    for lo in range(0, len(repeated), _CONFIRM):
        part = slice(lo, lo + _CONFIRM)
        mine = _lines_at(paths, repeated.rows[part], repeated.at[part])
        theirs = _lines_at(paths, repeated.firsts[part], repeated.first_at[part])
        calls = repeated.call[part].tolist()
        pairs = zip(mine, theirs, calls, strict=True)
        if any(a.strip() != b.strip() for a, b, call in pairs if not call):
            raise NeedsExactPath  # two different lines share a 64-bit hash: be exact
        picked = [i for i, call in enumerate(calls) if call]
        if picked and _identities([mine[i] for i in picked]) != _identities(
            [theirs[i] for i in picked]
        ):
            raise NeedsExactPath  # two different calls share a 64-bit hash


_CONFIRM = 1 << 16  # repeats read back at a time: their lines are held while compared


def _identities(lines: list[bytes]) -> list[tuple[object, ...]]:
    found = call_identities(b"".join(line + b"\n" for line in lines), len(lines))
    if found is None:
        raise NeedsExactPath  # (the fold read these lines: the file changed)
    return found


def _lines_at(paths: Sequence[str], rows: np.ndarray, offsets: np.ndarray) -> list[bytes]:
    """The line at each byte offset (of the file its row's piece is in: ``paths``, a piece's
    each), read in file order."""
    out: list[bytes] = [b""] * len(rows)
    files = sorted(set(paths))
    number_of = {name: number for number, name in enumerate(files)}
    which = np.array([number_of[p] for p in paths])[rows >> PIECE_SHIFT]
    by_file = np.argsort(which, kind="stable")
    cuts = np.searchsorted(which[by_file], np.arange(len(files) + 1)).tolist()
    for number in np.unique(which).tolist():
        picks = by_file[cuts[number] : cuts[number + 1]]
        picks = picks[np.argsort(offsets[picks], kind="stable")]
        with open(files[number], "rb") as fh:
            window = _Window(fh)
            for index in picks.tolist():
                out[index] = window.line(int(offsets[index]))
    return out


class _Window:
    """A file read a batch at a time, for lines asked for in increasing offsets."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.start, self.data = fh, 0, b""

    def line(self, offset: int) -> bytes:
        at = offset - self.start
        end = self.data.find(b"\n", at) if 0 <= at < len(self.data) else -1
        if end < 0:
            self.fh.seek(offset)
            self.start, self.data, at = offset, self.fh.read(BATCH_BYTES), 0
            end = self.data.find(b"\n")
            while end < 0:  # a line longer than a batch
                more = self.fh.read(BATCH_BYTES)
                if not more:
                    raise NeedsExactPath  # (the fold read this line whole: the file changed)
                self.data += more
                end = self.data.find(b"\n", len(self.data) - len(more))
        return self.data[at:end]


_SPACE = np.array([32, 9, 13, 11, 12], dtype=np.uint8)  # what bytes.strip removes, but \n


def _unpadded(data: np.ndarray, ends: np.ndarray) -> bool:
    """No line of ``data`` (``ends``: its newlines) starts or ends with what ``bytes.strip``
    removes: then the lines need no strip one by one."""
    if not len(data):
        return True
    after = ends[ends + 1 < len(data)] + 1
    edges = np.concatenate((data[:1], data[-1:], data[ends[ends > 0] - 1], data[after]))
    return not np.isin(edges, _SPACE).any()


def _deep_line(raw: list[bytes], data: np.ndarray, ends: np.ndarray) -> int | None:
    """The first line nested deeper than the whole-file reader allows (its depth rule,
    :func:`dedupe._refuse_deep`), or None: msgspec skips an unknown field without building it,
    so a line of 100k nested brackets would pass as a row. Brackets are counted per line with
    numpy; only a line with more than MAX_DEPTH of them is scanned exactly."""
    per_line = _brackets_per_line(data, ends, len(raw), MAX_DEPTH)
    for index in np.flatnonzero(per_line > MAX_DEPTH).tolist():
        if _depth_over(raw[index], MAX_DEPTH):
            return index
    return None


def _line_number(path: Path, offset: int) -> int:
    """The number (from 1) of the line that starts at byte ``offset`` of ``path``."""
    from eloledger.ledger.fastread import count_newlines

    lines = 1
    with open(path, "rb") as fh:
        while offset > 0:
            chunk = fh.read(min(BATCH_BYTES, offset))
            if not chunk:
                break
            lines += count_newlines(chunk, len(chunk))
            offset -= len(chunk)
    return lines


def _brackets_per_line(data: np.ndarray, ends: np.ndarray, lines: int, least: int) -> np.ndarray:
    """How many ``{`` and ``[`` each of the ``lines`` lines of ``data`` holds (``ends``: its
    newlines); all zeros when no line can hold more than ``least`` of them (every line the
    fold keeps is a row: :func:`reader.none_too_deep`, a fifth of the time of positions)."""
    is_open = open_brackets(data)
    if none_too_deep(is_open, lines, least):
        return np.zeros(lines, dtype=np.int64)
    opens = np.flatnonzero(is_open)
    before = np.searchsorted(opens, ends)  # brackets before each newline (then: the last line)
    return np.diff(np.concatenate((before, [len(opens)])), prepend=0)[:lines]


__all__ = [
    "LINE_MASK",
    "PIECE_SHIFT",
    "Repeated",
    "RowKeys",
    "confirm",
    "find_repeats",
    "line_keys",
]
