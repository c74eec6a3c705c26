"""Reading a ledger a batch of whole lines at a time, shared by the tally and the streamed fold.

Both folds read ``[start, end)`` of a file the same way (one reused buffer, a line longer than
a batch read whole, once) and decode each batch's columns with msgspec.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from eloledger.ledger.columns import NeedsExactPath
from eloledger.ledger.fastread import _decode_batch, count_lines

BATCH_BYTES = 2 << 20  # as fast as 1 or 4 MB (1M rows, 2026-12-04); 16 MB less than 4 per process
Load = Callable[[str], Any]  # a batch's column that was not decoded with the others


def read_batches(
    path: Path, start: int, end: int, size: int, *, numbered: bool = True
) -> Iterator[tuple[int, int, memoryview]]:
    """(line number counted from ``start``, byte offset, whole lines) of ``[start, end)``,
    about ``size`` bytes at a time; NeedsExactPath if the file shrank meanwhile.
    ``numbered=False``: every batch says line 1 (a caller that counts its lines anyway saves
    a pass over the bytes).

    Batches are read into one reused buffer: a fresh 4 MB ``bytes`` per read cost a page fault
    per 4 KB (0.59 s of 3.9 s for 1M rows); what is decoded from a batch holds no reference
    into it. A line longer than a batch is read whole, once."""
    buffer = bytearray(size)
    number = 1
    with open(path, "rb") as fh, memoryview(buffer) as whole:
        pos = start
        while pos < end:
            fh.seek(pos)
            data: bytes | bytearray = buffer
            got = fh.readinto(whole[: min(size, end - pos)])
            if not got:
                raise NeedsExactPath  # the file shrank since we looked
            cut = got if pos + got == end else buffer.rfind(b"\n", 0, got) + 1
            if cut == 0:  # one line longer than a batch: read it whole, once
                data = fh.read(_line_length(fh, pos, end))
                cut = len(data)
            with memoryview(data) as view, view[:cut] as lines:
                yield number, pos, lines
            if numbered:
                number += count_lines(data, cut)
            pos += cut


def batch_lines(data: bytes) -> list[bytes]:
    """The lines of a batch :func:`read_batches` gave (the last one may lack its newline)."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _line_length(fh: Any, pos: int, end: int) -> int:
    """Bytes from ``pos`` through the next newline (or ``end``), found a batch at a time; the
    file is left at ``pos``."""
    fh.seek(pos)
    length = 0
    while pos + length < end:
        piece = fh.read(min(BATCH_BYTES, end - pos - length))
        if not piece:
            break
        found = piece.find(b"\n")
        if found >= 0:
            length += found + 1
            break
        length += len(piece)
    fh.seek(pos)
    return length


def decode_batch(
    lines: memoryview, names: Sequence[str], swaps: Any, count: int | None = None
) -> tuple[Any, int, Load]:
    """The batch's columns, its row count and a loader of one more column (``count``: the
    batch's lines, when the caller counted them already)."""
    columns, length = _decode_batch(lines, names, swaps, count)

    def load(name: str) -> Any:  # called while ``lines`` is still open
        return _decode_batch(lines, (name,), swaps)[0][name]

    return columns, length, load
