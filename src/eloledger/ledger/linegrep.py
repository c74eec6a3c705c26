"""Whole lines of a ledger file that hold a given byte string, parsed: a cheap side scan.

Why: a warning about a rare kind of row (another model answered, zero usage) should not cost a
second full decode of a big ledger; ``bytes.find`` over 4 MB chunks finds the few lines worth
parsing, and memory stays flat in the file's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

SAMPLE_ROLES = ("sample", "select", None)  # the rows an arm's cost is made of (None: sample)
_CHUNK = 1 << 22
# a row this side scan looks for is small; a longer line (a huge ``content``) is passed over,
# so memory stays flat in the line's size too (the main reader reports such a line)
_LONGEST = 8 << 20


def scan_lines(
    path: Path, needles: tuple[bytes, ...], take: Callable[[dict[str, Any], str], None]
) -> None:
    """``take(row, "file:line")`` for each whole line holding one of ``needles``, read 4 MB at a
    time (memory flat in the file's size); only those lines are parsed, torn ones and lines over
    ``_LONGEST`` skipped."""
    line = 1  # the line number of the chunk's first line
    pending = b""
    skipping = False  # inside a line longer than _LONGEST: read past it, never hold it
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if skipping:
                end = chunk.find(b"\n")
                if end < 0:
                    if not chunk:
                        return
                    continue
                line, chunk, skipping = line + 1, chunk[end + 1 :], False
            data = pending + chunk
            cut = len(data) if not chunk else data.rfind(b"\n") + 1
            whole, pending = data[:cut], data[cut:]
            if len(pending) > _LONGEST:
                pending, skipping = b"", True
            starts = sorted({whole.rfind(b"\n", 0, at) + 1 for at in _hits(whole, needles)})
            counted = 0
            for start in starts:
                end = whole.find(b"\n", start)
                end = len(whole) if end < 0 else end
                line += whole.count(b"\n", counted, start)
                counted = start
                try:
                    row = orjson.loads(whole[start:end])
                except orjson.JSONDecodeError:
                    continue  # a torn line: the reader that reads the file reports it
                if isinstance(row, dict):
                    take(row, f"{path}:{line}")
            line += whole.count(b"\n", counted)
            if not chunk:
                return


def _hits(data: bytes, needles: tuple[bytes, ...]) -> Iterator[int]:
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            yield at
            at = data.find(needle, at + 1)
