"""A ledger's tally kept in the user's cache folder, so that reading a growing ledger again
folds only the lines appended since (``tokens`` on a ledger that a run is still writing).

Only a ledger in writing order (strictly increasing ``ts``, as eloledger writes them) is
cached: its tally is the whole state of its fold. A ledger out of order also needs its lines'
hashes for the duplicate rule, and those are Python's hashes, seeded anew in every process.

A cached tally is used only for the same file (device and inode), no shorter than what was
folded, whose first and last 64 KB of the folded part hash as they did, read with the same
columns, grouping and prices by the same eloledger; anything else folds the ledger whole and
writes the cache again. What it cannot see: a change in the middle of a ledger that keeps
its size and both ends. Ledgers are appended to, not edited; ``--no-cache`` reads whole.

The cache is a pickle: it is read only from a file this user owns that nobody else can write,
opened without following a symlink.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pickle
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FORMAT = 1
_EDGE = 1 << 16  # bytes hashed at each end of the folded part
SMALLEST = 8 << 20  # a smaller ledger is folded whole: faster than writing a cache
KEEP = 32  # tallies kept in the folder, the ones used last ...
BUDGET = 512 << 20  # ... within this many bytes


@dataclass
class Cached:
    """A tally of the ledger's first ``end`` bytes (whole lines)."""

    tally: Any
    end: int


def fingerprint(names: Sequence[str], by: str, prices: Mapping[str, Any] | None) -> str:
    """What else a tally depends on: the columns read, the grouping, the prices, and the
    code that folds (every module of this package, so an edited fold never reads a tally
    pickled by the code before it)."""
    what = [_FORMAT, _code(), list(names), by, prices]
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def _code() -> str:
    digest = hashlib.sha256()
    for module in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(module.read_bytes())
    return digest.hexdigest()


def load(path: Path, key: str, folder: Path) -> Cached | None:
    """The cached tally of ``path`` if it still holds (see the module's doc), else None."""
    entry = _entry(path, key, folder)
    try:
        with open(os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as fh:
            info = os.fstat(fh.fileno())  # (of the file read, not of a name swapped since)
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return None  # another user could have written it: never unpickle that
            saved = pickle.load(fh)
        stat = path.stat()
        if (saved["key"], saved["dev"], saved["ino"]) != (key, stat.st_dev, stat.st_ino):
            return None
        end = saved["end"]
        if stat.st_size < end or saved["edges"] != _edges(path, end):
            return None
        os.utime(entry)  # used: the last to be pruned
        return Cached(saved["tally"], end)
    except Exception:  # noqa: BLE001 (missing, unreadable, another format: fold whole)
        return None


def identity(path: Path) -> tuple[int, int]:
    """The file's device and inode: taken before the fold, so that a file replaced while it
    was folded never gets the tally of the one before it."""
    stat = path.stat()
    return stat.st_dev, stat.st_ino


def save(
    path: Path, key: str, folder: Path, tally: Any, end: int, folded: tuple[int, int]
) -> None:
    """Keep ``tally`` (of the first ``end`` bytes of the file whose :func:`identity` was
    ``folded``) for the next read; a cache that cannot be written is no error (the next read
    folds the ledger whole)."""
    with contextlib.suppress(OSError, pickle.PicklingError):
        stat = path.stat()
        if (stat.st_dev, stat.st_ino) != folded:
            return  # replaced while it was folded
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        saved = {"key": key, "dev": stat.st_dev, "ino": stat.st_ino, "end": end,
                 "edges": _edges(path, end), "tally": tally}  # fmt: skip
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tally-")  # 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(saved, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, _entry(path, key, folder))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(folder)


def _prune(folder: Path) -> None:
    """Keep the tallies used last: at most ``KEEP`` of them and ``BUDGET`` bytes (a tally is
    about 12 MB for a million rows with distinct latencies), the newest one always."""
    entries = []
    for entry in folder.glob("*.pickle"):
        with contextlib.suppress(OSError):  # (another process may prune at the same time)
            info = entry.stat()
            entries.append((info.st_mtime, info.st_size, entry))
    total = 0
    for kept, (_, size, entry) in enumerate(sorted(entries, reverse=True)):
        total += size
        if kept and (kept >= KEEP or total > BUDGET):
            entry.unlink(missing_ok=True)


def _entry(path: Path, key: str, folder: Path) -> Path:
    name = hashlib.sha256(f"{os.path.realpath(path)}\0{key}".encode()).hexdigest()[:40]
    return folder / f"{name}.pickle"


def _edges(path: Path, end: int) -> tuple[str, str]:
    """The hashes of the first and the last 64 KB of the file's first ``end`` bytes."""
    with open(path, "rb") as fh:
        head = fh.read(min(_EDGE, end))
        fh.seek(max(0, end - _EDGE))
        tail = fh.read(min(_EDGE, end))
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()


__all__ = ["BUDGET", "KEEP", "SMALLEST", "Cached", "fingerprint", "identity", "load", "save"]
