"""Append-only ledger writer: one ``write(2)`` per row, so a crash tears at most the last line."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from eloledger.ledger.schema import SCHEMA_VERSION
from eloledger.redact import scrub

_SCRUBBED_FIELDS = ("error", "content", "base_url")


class LedgerWriter:
    """Appends rows to a JSONL ledger that any number of readers may follow.

    The file is opened with ``O_APPEND`` and each row is written with one unbuffered
    ``os.write``: readers never see half a row except after a crash, and a torn tail left by
    an earlier crash is cut back to the last complete line before the first new row (a torn
    line was never a record, and appending after it would glue two rows together).
    Secrets registered with :mod:`eloledger.redact` are scrubbed from text fields.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fsync = fsync
        self._lock = threading.Lock()
        self.torn_bytes_dropped = _drop_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        record = {"v": SCHEMA_VERSION, **row}
        record.setdefault("ts", time.time())
        for field in _SCRUBBED_FIELDS:
            value = record.get(field)
            if isinstance(value, str):
                record[field] = scrub(value)
        data = orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self._fsync:
                os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> LedgerWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_torn_tail(path: Path) -> int:
    """Truncate an unterminated last line; return how many bytes were dropped."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        block = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                keep = start + idx + 1
                fh.truncate(keep)
                return size - keep
            pos = start
        fh.truncate(0)
        return size
