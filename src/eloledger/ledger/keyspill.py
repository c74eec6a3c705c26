"""Hashes kept on disk and read back a 64th at a time: what the duplicate rules compare.

Why on disk: finding the rows that repeat an earlier one needs every row's hash. Kept in memory
(8 bytes a row in each folding process, plus the copies sent between them) that grew with the
file; written here, a fold's memory stays the same for 1M rows or 4M.

A record is three int64: a hash, the row (``piece << 40`` + its line in the piece, from 0) and
the byte offset where its line starts. A writer splits its records by the hash's top bits into
:data:`PARTS` files; :func:`read_part` reads one part of every writer's files in order, so the
records of a part come back in reading order (writers are read in the order of their rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np

PART_BITS = 6
PARTS = 1 << PART_BITS
_FLUSH = 1 << 16  # records buffered before they are written (1.5 MB)


class SpillWriter:
    """One folding process's records of one kind (``name``), split into parts on disk."""

    def __init__(self, folder: Path, name: str) -> None:
        self.folder, self.name = folder, name
        self.files: dict[int, BinaryIO] = {}  # opened once a record goes there
        self.buffered: list[np.ndarray] = []
        self.size = 0

    def add(self, keys: np.ndarray, rows: np.ndarray, offsets: np.ndarray) -> None:
        if not len(keys):
            return
        self.buffered.append(np.stack((keys, rows, offsets), axis=1).astype(np.int64, copy=False))
        self.size += len(keys)
        if self.size >= _FLUSH:
            self.flush()

    def flush(self) -> None:
        """Write the buffered records, each to its part's file (a stable sort by part keeps
        them in reading order within a part)."""
        if not self.buffered:
            return
        records = np.concatenate(self.buffered)
        self.buffered, self.size = [], 0
        parts = (records[:, 0].view(np.uint64) >> np.uint64(64 - PART_BITS)).astype(np.uint8)
        order = np.argsort(parts, kind="stable")
        records, parts = records[order], parts[order]
        cuts = np.searchsorted(parts, np.arange(PARTS + 1)).tolist()
        for part, (lo, hi) in enumerate(zip(cuts, cuts[1:], strict=False)):
            if lo < hi:
                if part not in self.files:
                    self.files[part] = open(self.folder / f"{self.name}.{part}", "wb")  # noqa: SIM115
                self.files[part].write(records[lo:hi].tobytes())

    def close(self) -> None:
        try:
            self.flush()
        finally:
            for fh in self.files.values():
                fh.close()


def read_part(folder: Path, names: Sequence[str], part: int) -> np.ndarray:
    """Part ``part`` of the writers ``names`` (in this order), as an (n, 3) int64 array."""
    chunks = []
    for name in names:
        path = folder / f"{name}.{part}"
        if path.exists():
            chunks.append(np.fromfile(path, dtype=np.int64))
    records = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return records.reshape(-1, 3)


__all__ = ["PARTS", "SpillWriter", "read_part"]
