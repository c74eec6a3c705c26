"""Fold any ledgers batch by batch with the duplicate rules, in memory that does not grow with
the files.

:func:`eloledger.ledger.tally.stream_tally` streams one file in writing order, where no row can
repeat another. Everything else (several files, no ``ts``, unordered or repeated ``ts``) is
folded here, in four steps:

1. The files are cut at line ends into blocks of about 32 MB (small files share one), and the
   blocks shared out by bytes among up to four processes (fork, Linux). Each process folds its
   blocks in reading order, a tally per block, leaving nothing out, and writes every row's keys
   to a spill on disk (:class:`repeats.RowKeys`).
2. :func:`repeats.find_repeats` finds in the spill the rows that repeat an earlier one, and
   :func:`repeats.confirm` reads them back (a hash collision sends the read to the exact path).
3. Only the blocks that hold a repeat are folded again, without those rows: most ledgers
   repeat nothing, and two shards that overlap at their seam fold a block or two again.
4. The tallies are merged in reading order.

A line only the exact reader reads (blank, NaN, an odd type) raises :class:`NeedsExactPath` and
the caller reads the files whole, as before.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.ledger.batches import BATCH_BYTES, decode_batch, read_batches
from eloledger.ledger.columns import Factor, NeedsExactPath, batch_swaps
from eloledger.ledger.dedupe import _SHOW, duplicate_message
from eloledger.ledger.fastread import _auto_workers, count_lines
from eloledger.ledger.repeats import (
    LINE_MASK,
    PIECE_SHIFT,
    Repeated,
    RowKeys,
    confirm,
    find_repeats,
    lines_in_piece,
)
from eloledger.ledger.slices import read_slices, stop_if_told

_BATCH_BYTES = BATCH_BYTES  # (a test makes it tiny)
_BLOCK_BYTES = 32 << 20  # a block is folded again when it holds a repeat (a test makes it tiny)
_HEAD_BYTES = 4 << 20  # a later big file's first block, where overlapping shards repeat


@dataclass(frozen=True)
class Piece:
    """Whole lines ``[start, end)`` of file number ``source``, folded by one process."""

    source: int
    path: Path
    start: int
    end: int


Block = list[tuple[int, Piece]]  # (piece number in reading order, piece): one tally's rows


@dataclass
class Folded:
    """What :func:`fold_files` gives: the tally, the reader's warnings (torn tails, then the
    duplicate warning) and the ``file:line`` of the tally's evidence rows."""

    tally: Any
    warnings: list[str]
    where: Callable[[int], str]


@dataclass
class _Folded:
    """One block folded: its tally, each piece's lines and the ``(piece, line from 0)`` of
    the tally's evidence rows."""

    tally: Any
    lines: list[int]
    evidence: dict[int, tuple[int, int]]


def fold_files(
    paths: Sequence[Path], names: Sequence[str], new: Callable[[], Any], workers: int | None = None
) -> Folded:
    """Fold ``paths`` in order into ``new()`` (a TokenTally), repeats left out: the tally, the
    reader's warnings (torn tails, then the duplicate warning) and the ``file:line`` of the
    tally's evidence rows. NeedsExactPath if a line needs the exact reader. ``workers``: how
    many processes (default: by the bytes; asked for, even small files are shared out)."""
    from eloledger.ledger.reader import _inspect

    inspected = [_inspect(path) for path in paths]
    ends = [end for end, _ in inspected]
    count = workers if workers is not None else _auto_workers(sum(ends))
    shares = _shares(paths, ends, count)
    blocks = [block for share in shares for block in share]
    pieces = [piece for block in blocks for _, piece in block]
    calls = len(paths) > 1
    try:
        with tempfile.TemporaryDirectory(prefix="eloledger-keys-") as spill:
            folded = _fold_shares(shares, names, new, Path(spill), calls)
            sources = np.array([piece.source for piece in pieces], dtype=np.int64)
            repeated = find_repeats(Path(spill), len(shares), sources, calls)
    except OSError as exc:  # no room for the spill: the exact reader needs none
        raise NeedsExactPath from exc
    confirm(repeated, [piece.path for piece in pieces])
    repeated = repeated.confirmed(_SHOW)
    hit = set(np.unique(repeated.rows >> PIECE_SHIFT).tolist())  # pieces that hold a repeat
    again = [k for k, block in enumerate(blocks) if any(i in hit for i, _ in block)]
    for k in again:  # here, in order: a forked worker would cost more memory than it saves time
        old, folded[k] = folded[k], None  # (the tally folded with the repeats is let go first)
        answered = old is not None and old.tally.answered  # (a repeat that names it counts)
        del old
        refolded = _fold_block(blocks[k], names, new(), None, repeated.rows)
        refolded.tally.answered = refolded.tally.answered or answered
        folded[k] = refolded
    return _merged(paths, inspected, pieces, folded, new, repeated)


def _shares(paths: Sequence[Path], ends: Sequence[int], count: int) -> list[list[Block]]:
    """The files cut into ``count`` shares of about equal bytes, in reading order (none
    empty), each a list of blocks; every cut moved to the end of its line. A block is one
    piece of a big file, or several small files, about :data:`_BLOCK_BYTES` either way.

    A big file after the first starts a block of its own, and its first :data:`_HEAD_BYTES`
    are a block too: shards that overlap repeat each other there, at the seam, and a block
    that holds a repeat is folded again (two 140 MB shards: 4 MB again, not 62)."""
    total = sum(ends)
    cuts = [total * k // count for k in range(1, count)] if count > 1 else []
    shares: list[list[Block]] = []
    base, last_share, size, number = 0, -1, 0, 0
    for source, (path, end) in enumerate(zip(paths, ends, strict=True)):
        big = source > 0 and end >= _BLOCK_BYTES // 2
        head = _line_ends(path, [_HEAD_BYTES], end) if big and end > _HEAD_BYTES else []
        inside = [cut - base for cut in cuts if base < cut < base + end]
        inside += range((head or [0])[0] + _BLOCK_BYTES, end, _BLOCK_BYTES)
        bounds = sorted({0, end, *head, *_line_ends(path, inside, end)})
        for start, stop in zip(bounds, bounds[1:], strict=False):
            share = sum(cut <= base + start for cut in cuts)
            if share != last_share:
                shares.append([[]])
                last_share, size = share, 0
            elif size >= _BLOCK_BYTES or (big and (start == 0 or start in head)):
                shares[-1].append([])
                size = 0
            shares[-1][-1].append((number, Piece(source, path, start, stop)))
            size, number = size + stop - start, number + 1
        base += end
    return shares


def _line_ends(path: Path, offsets: Sequence[int], end: int) -> list[int]:
    """Each offset moved to the end of the line it falls in (at most ``end``)."""
    found: list[int] = []
    if not offsets:  # (a small file: no cut falls inside it, and it need not be opened)
        return found
    with open(path, "rb") as fh:
        for offset in offsets:
            fh.seek(offset - 1)
            fh.readline()
            found.append(min(fh.tell(), end))
    return found


def _fold_shares(
    shares: Sequence[Sequence[Block]],
    names: Sequence[str],
    new: Callable[[], Any],
    spill: Path,
    calls: bool,
) -> list[_Folded | None]:
    """Each share folded by a process of its own (this one takes the first), every row's keys
    written to ``spill``: the blocks' tallies, in reading order."""
    from concurrent.futures.process import BrokenProcessPool

    read = functools.partial(_fold_share, shares, names=names, new=new, spill=spill, calls=calls)
    bounds = [(k, k + 1) for k in range(len(shares))]
    try:
        done = read_slices(read, bounds)
    except BrokenProcessPool:  # a worker was killed: fold them all here
        done = [read(k, k + 1) for k in range(len(shares))]
    return [block for share in done for block in share]


def _fold_share(
    shares: Sequence[Sequence[Block]],
    task: int,
    _end: int,
    *,
    names: Sequence[str],
    new: Callable[[], Any],
    spill: Path,
    calls: bool,
) -> list[_Folded]:
    """Share ``task``'s blocks folded in reading order, a tally each, every row's keys
    written to ``spill``."""
    keys = RowKeys(spill, task, calls)
    try:
        return [_fold_block(block, names, new(), keys, None) for block in shares[task]]
    finally:
        keys.close()


def _fold_block(
    block: Block, names: Sequence[str], tally: Any, keys: RowKeys | None, skip: np.ndarray | None
) -> _Folded:
    """One block folded into ``tally``: with ``keys``, every row's keys written there; with
    ``skip`` (the repeats' rows, sorted), those rows left out. Small files that name their
    fields alike are folded together, a batch at a time (a batch of its own cost a file
    about 0.45 ms: 8,000 small ledgers took 3.8 s)."""
    folded = _Folded(tally, [], {})
    together: list[tuple[int, Piece, bytes]] = []
    swaps: Any = None
    size = 0  # bytes in together
    for number, piece in block:
        if piece.start == 0 and piece.end < _BATCH_BYTES // 4:
            data = _whole_file(piece)
            mine = batch_swaps(data, names)
            if together and (mine != swaps or size + len(data) > _BATCH_BYTES):
                _fold_together(together, swaps, names, keys, skip, folded)
                together, size = [], 0
            together.append((number, piece, data))
            swaps, size = mine, size + len(data)
            continue
        if together:
            _fold_together(together, swaps, names, keys, skip, folded)
            together, size = [], 0
        left_out = lines_in_piece(skip, number) if skip is not None else None
        count = _fold_piece(number, piece, names, tally, keys, left_out, folded.evidence)
        folded.lines.append(count)
    if together:
        _fold_together(together, swaps, names, keys, skip, folded)
    tally.tidy()
    return folded


def _whole_file(piece: Piece) -> bytes:
    with open(piece.path, "rb") as fh:
        data = fh.read(piece.end)
    if len(data) != piece.end:
        raise NeedsExactPath  # the file shrank since we looked
    return data


def _fold_together(
    files: Sequence[tuple[int, Piece, bytes]],
    swaps: Any,
    names: Sequence[str],
    keys: RowKeys | None,
    skip: np.ndarray | None,
    folded: _Folded,
) -> None:
    """Whole small files (their fields named alike: ``swaps``) folded as one batch."""
    stop_if_told()
    joined = b"".join(data for _, _, data in files)
    if keys is not None:
        sizes = [(piece.path, number, len(data)) for number, piece, data in files]
        counts = keys.add_files(joined, sizes)
    else:
        counts = [count_lines(data, len(data)) for _, _, data in files]
    keep = None
    if skip is not None:
        masks = [
            _kept_rows(lines_in_piece(skip, number), 0, count)
            for (number, _, _), count in zip(files, counts, strict=True)
        ]
        if any(mask is not None for mask in masks):
            keep = np.concatenate(
                [
                    np.ones(n, dtype=bool) if m is None else m
                    for m, n in zip(masks, counts, strict=True)
                ]
            )
    starts = np.cumsum([0, *counts])
    numbers = [number for number, _, _ in files]

    def place(row: int) -> tuple[int, int]:
        k = int(np.searchsorted(starts, row, side="right")) - 1
        return numbers[k], row - int(starts[k])

    with memoryview(joined) as view:
        _fold_batch(view, names, swaps, int(starts[-1]), keep, folded.tally, place, folded.evidence)
    folded.lines.extend(counts)


def _fold_piece(
    number: int,
    piece: Piece,
    names: Sequence[str],
    tally: Any,
    keys: RowKeys | None,
    left_out: np.ndarray | None,
    evidence: dict[int, tuple[int, int]],
) -> int:
    """Fold one piece's lines into ``tally`` (its keys written to ``keys``, the lines
    ``left_out`` left out): how many lines it holds."""
    swaps, first = None, 0  # (first: the batch's first line in the piece, from 0)
    batches = read_batches(piece.path, piece.start, piece.end, _BATCH_BYTES, numbered=False)
    for _, pos, data in batches:
        stop_if_told()
        if swaps is None:
            swaps = batch_swaps(data, names)
        if keys is None:  # (folded again: only the lines' count is needed, not the lines)
            count = count_lines(data, len(data))
        else:
            count = keys.add(piece.path, number, first, pos, bytes(data))
        keep = _kept_rows(left_out, first, count)
        place = functools.partial(_in_piece, number, first)
        first += _fold_batch(data, names, swaps, count, keep, tally, place, evidence)
    return first


def _in_piece(number: int, first: int, row: int) -> tuple[int, int]:
    return number, first + row


def _fold_batch(
    data: memoryview,
    names: Sequence[str],
    swaps: Any,
    count: int,
    keep: np.ndarray | None,
    tally: Any,
    place: Callable[[int], tuple[int, int]],
    evidence: dict[int, tuple[int, int]],
) -> int:
    """Decode one batch of ``count`` lines and fold the rows ``keep`` keeps (None: all) into
    ``tally``; the first odd or unequal row is noted in ``evidence`` where ``place`` puts
    the batch's row. How many lines the batch holds."""
    columns, length, load = decode_batch(data, names, swaps, count)
    before, marks = tally.rows, (tally.odd[1], tally.unequal[1])
    if keep is None:
        tally.fold(columns, length, load)
    else:
        kept = {name: _kept(column, keep) for name, column in columns.items()}
        tally.fold(kept, int(keep.sum()), functools.partial(_kept_load, load, keep))
    for mark, seen in zip(marks, (tally.odd, tally.unequal), strict=True):
        if mark < 0 <= seen[1]:
            row = seen[1] - before
            evidence[seen[1]] = place(row if keep is None else int(np.flatnonzero(keep)[row]))
    return length


def _kept_rows(left_out: np.ndarray | None, first: int, count: int) -> np.ndarray | None:
    """Which of the batch's rows (lines ``first`` on) are kept; None when all are."""
    if left_out is None:
        return None
    lo, hi = np.searchsorted(left_out, [first, first + count])
    if lo == hi:
        return None
    keep = np.ones(count, dtype=bool)
    keep[left_out[lo:hi] - first] = False
    return keep


def _kept(column: Any, keep: np.ndarray) -> Any:
    return Factor(column.codes[keep], column.levels) if isinstance(column, Factor) else column[keep]


def _kept_load(load: Callable[[str], Any], keep: np.ndarray, name: str) -> Any:
    return _kept(load(name), keep)


def _merged(
    paths: Sequence[Path],
    inspected: Sequence[tuple[int, int]],
    pieces: Sequence[Piece],
    folded: Sequence[_Folded | None],
    new: Callable[[], Any],
    repeated: Repeated,
) -> Folded:
    """The blocks' tallies merged in reading order, with the warnings and evidence places."""
    from eloledger.ledger.reader import _torn_message

    blocks = [block for block in folded if block is not None]
    first_line, lines_in = [], [0] * len(paths)
    for piece, count in zip(pieces, (n for block in blocks for n in block.lines), strict=True):
        first_line.append(lines_in[piece.source] + 1)
        lines_in[piece.source] += count

    def where(row: int) -> str:
        piece = row >> PIECE_SHIFT
        return f"{pieces[piece].path}:{first_line[piece] + (row & LINE_MASK)}"

    tally = blocks[0].tally if blocks else new()  # (the first block's: no copy of it)
    located: dict[int, str] = {}
    for k, block in enumerate(blocks):
        rows = tally.rows if k else 0
        if k:
            tally.merge(block.tally)
        located |= {rows + r: where((p << PIECE_SHIFT) + n) for r, (p, n) in block.evidence.items()}
    warnings = [
        _torn_message(path, lines_in[source] + 1, torn)
        for source, (path, (_, torn)) in enumerate(zip(paths, inspected, strict=True))
        if torn
    ]
    if len(repeated):
        firsts = zip(repeated.rows[:_SHOW].tolist(), repeated.firsts[:_SHOW].tolist(), strict=True)
        shown = [(where(row), where(first)) for row, first in firsts]
        warnings.append(duplicate_message(shown, total=len(repeated)))
    return Folded(tally, warnings, located.__getitem__)


__all__ = ["Folded", "fold_files"]
