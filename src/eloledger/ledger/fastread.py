"""The fast path of the reader: msgspec bulk decoding into columns, in batches and processes.

Only the fields needed for the requested columns are decoded (msgspec skips the others
without building them). The file is memory-mapped and decoded a few MB at a time, so a batch's
rows are still in the CPU cache when their columns are extracted; big files are split at line
boundaries across worker processes. Whatever is unusual raises :class:`NeedsExactPath`, and the
reader starts again on the exact, line-by-line path.
"""

from __future__ import annotations

import functools
import mmap
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from eloledger.ledger.columns import (
    Columns,
    NeedsExactPath,
    Swaps,
    alias_swaps,
    columns_from_structs,
    concat,
    row_decoder,
)
from eloledger.ledger.slices import read_slices, stop_if_told

_PARALLEL_MIN_BYTES = 48 << 20


def fast_columns(
    path: Path, end: int, names: Sequence[str], workers: int | None
) -> tuple[Columns, int]:
    """Decode ``[0, end)`` of the file in one process or several; NeedsExactPath if unusual."""
    count = workers if workers is not None else _auto_workers(end)
    bounds = _split(path, end, count)
    if len(bounds) == 1:
        return _read_chunk(str(path), 0, end, names)
    try:
        parts = read_slices(functools.partial(_read_chunk, str(path), names=names), bounds)
    except (BrokenProcessPool, OSError, ValueError):
        return _read_chunk(str(path), 0, end, names)
    return concat([c for c, _ in parts], names), sum(n for _, n in parts)


def _auto_workers(size: int) -> int:
    if size < _PARALLEL_MIN_BYTES or threading.active_count() > 1:
        return 1  # forking a threaded process (a TUI, a server) is not safe
    if not sys.platform.startswith("linux"):
        return 1  # fork is the cheap start method, and only Linux makes it safe with numpy
    return max(1, min(os.cpu_count() or 1, 4, size // (_PARALLEL_MIN_BYTES // 2)))


def _split(
    path: Path, end: int, count: int, first_share: float | None = None
) -> list[tuple[int, int]]:
    """``count`` byte ranges of whole lines covering ``[0, end)``; the first one ``first_share``
    of the bytes when given (the calling process, which also merges, takes a little less)."""
    share = 1 / count if first_share is None else first_share
    targets = [end * (share + (1 - share) * (i - 1) / (count - 1)) for i in range(1, count)]
    cuts = [0]
    if count > 1:
        with open(path, "rb") as fh:
            for target in targets:
                fh.seek(max(int(target) - 1, cuts[-1]))
                fh.readline()
                cut = min(fh.tell(), end)
                if cut > cuts[-1]:
                    cuts.append(cut)
    if cuts[-1] != end:
        cuts.append(end)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


_BATCH_BYTES = 4 << 20  # decode this much at a time: the rows stay in the CPU cache


def _read_chunk(path: str, start: int, end: int, names: Sequence[str]) -> tuple[Columns, int]:
    """Fast path for one slice of whole lines (runs in a worker process for big files).

    The file is memory-mapped (no copy) and decoded a few MB at a time, so that the decoded
    rows of a batch are still in the CPU cache when their columns are extracted.
    """
    parts: list[Columns] = []
    length = 0
    with open(path, "rb") as fh, _mapped(fh, end) as mapped:
        view = memoryview(mapped)
        first = mapped.find(b"\n", start, end)
        swaps = alias_swaps(mapped[start : end if first < 0 else first], names)
        try:
            pos = start
            while pos < end:
                stop_if_told()
                stop = mapped.find(b"\n", min(pos + _BATCH_BYTES, end) - 1, end) + 1 or end
                with view[pos:stop] as batch:
                    columns, n = _decode_batch(batch, names, swaps)
                parts.append(columns)
                length += n
                pos = stop
        finally:
            view.release()
    if not parts:
        raise NeedsExactPath
    return concat(parts, names), length


def _mapped(fh: Any, end: int) -> mmap.mmap:
    try:
        return mmap.mmap(fh.fileno(), end, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:  # the file shrank since we looked: read it exactly
        raise NeedsExactPath from exc


def _decode_batch(
    batch: memoryview, names: Sequence[str], swaps: Swaps, lines: int | None = None
) -> tuple[Columns, int]:
    """A batch's columns, decoded by msgspec."""
    return decode_msgspec(batch, names, swaps, lines)


def decode_msgspec(
    batch: memoryview, names: Sequence[str], swaps: Swaps, lines: int | None = None
) -> tuple[Columns, int]:
    """A batch's columns by msgspec: tightly typed first, loosely when a row needs it.
    ``lines``: how many lines the batch has, when the caller counted them already."""
    structs, tight = None, True
    for tight in (True, False):
        try:
            decoder = row_decoder(names, tight=tight, swaps=swaps if tight else ())
            structs = decoder.decode_lines(batch)
            break
        except msgspec.ValidationError as exc:
            if not tight:
                raise NeedsExactPath from exc
        except (msgspec.DecodeError, RecursionError) as exc:  # the exact path names the line
            raise NeedsExactPath from exc
    if lines is None:
        lines = count_lines(batch, len(batch))
    if not structs or len(structs) != lines:  # blank or multi-line records: be exact
        raise NeedsExactPath
    return columns_from_structs(structs, names, tight=tight), len(structs)


def count_lines(data: Any, end: int) -> int:
    """The lines in ``data[:end]``, a last one without its newline counted too (what
    ``batch_lines`` would split, without making them)."""
    if not end:
        return 0
    return count_newlines(data, end) + (0 if data[end - 1] == 10 else 1)


def count_newlines(data: Any, end: int) -> int:
    """The newlines in ``data[:end]``: numpy, a 4 MB slice at a time (a fifth of the time
    of ``bytes.count``; one huge line needs no copy of itself). No array is left pointing
    into ``data`` (a mapping can only close once none does)."""
    raw = np.frombuffer(data, dtype=np.uint8, count=end)
    step = 1 << 22
    return sum(int(np.count_nonzero(raw[i : i + step] == 10)) for i in range(0, end, step))
