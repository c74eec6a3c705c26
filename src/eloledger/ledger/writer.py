"""Append-only ledger writer: one ``write(2)`` per row (or per batch of whole rows, for an
import), so a crash tears at most the last line.

One writer at a time: the writer holds an advisory lock (``flock``) on a sidecar file
``<ledger>.lock`` for its whole life, and the sidecar names the holder (pid, start time). Two
runs appending to one ledger would record every call twice and double every cost.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from eloledger.errors import UserError
from eloledger.ledger.row import LedgerRow, plain, row_from_dict
from eloledger.ledger.sources import check_writable
from eloledger.redact import scrub

_SCRUBBED_FIELDS = ("error", "content", "base_url")


class LedgerWriter:
    """Appends rows to a JSONL ledger that any number of readers may follow.

    The file is opened with ``O_APPEND`` and each row is written with one unbuffered
    ``os.write``: readers never see half a row except after a crash, and a torn tail left by
    an earlier crash is cut back to the last complete line before the first new row (a torn
    line was never a record, and appending after it would glue two rows together). A write
    that fails half-way (disk full) is cut back too, so the ledger stays whole.
    Secrets registered with :mod:`eloledger.redact` are scrubbed from text fields.
    OS errors (read-only or full file system, permissions) become one-line UserErrors.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._lock = threading.Lock()
        self._fd = -1
        self._lock_fd = -1
        check_writable(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _take_lock(self.path)
            self.torn_bytes_dropped = _drop_torn_tail(self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            self.close()
            raise _write_error(self.path, exc) from None
        except BaseException:
            self.close()
            raise
        self._regular = stat.S_ISREG(os.fstat(self._fd).st_mode)

    def append(self, row: LedgerRow | Mapping[str, Any]) -> None:
        """Append one row. The writers build :class:`LedgerRow`; a mapping (a test's literal, a
        row read back) goes through :func:`~eloledger.ledger.row.row_from_dict`, which refuses
        a name the schema does not have."""
        if not isinstance(row, LedgerRow):
            row = row_from_dict(row)
        self.append_line(encode_row(row))

    def append_line(self, data: bytes) -> None:
        """Append one row already encoded by :func:`encode_row` (e.g. in a worker process)."""
        with self._lock:
            if self._fd < 0:
                raise UserError(f"{self.path}: the ledger writer is closed")
            start = os.lseek(self._fd, 0, os.SEEK_END) if self._regular else 0
            try:
                view = memoryview(data)
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
                if self._fsync:
                    os.fsync(self._fd)
            except OSError as exc:
                if self._regular:
                    _cut_back(self._fd, start)
                raise _write_error(self.path, exc) from None

    def append_lines(self, lines: list[bytes]) -> None:
        """Append many rows encoded by :func:`encode_row` with one ``write(2)`` (an import).

        The same promises as :meth:`append_line`: a crash tears at most the last line, and a
        write that fails half-way is cut back to where the batch started, so no row of it is
        half there (each row is whole or absent).
        """
        if lines:
            self.append_line(b"".join(lines))

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            if self._lock_fd >= 0:
                _release_lock(self.path, self._lock_fd)
                self._lock_fd = -1

    def __enter__(self) -> LedgerWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def encode_row(row: LedgerRow) -> bytes:
    """One ledger line: fields in LedgerRow's order (the version first), ``ts`` defaulted to
    now, secrets scrubbed; the row itself is left as it was."""
    changes: dict[str, Any] = {}
    if row.ts is UNSET:
        changes["ts"] = time.time()
    for field in _SCRUBBED_FIELDS:
        value = getattr(row, field)
        if isinstance(value, str) and (clean := scrub(value)) != value:
            changes[field] = clean
    if changes:
        row = msgspec.structs.replace(row, **changes)
    return _encode(row) + b"\n"


_encode = msgspec.json.Encoder(enc_hook=plain).encode


def lock_path(path: Path) -> Path:
    """The sidecar that holds the writer's lock and names its holder."""
    return path.with_name(path.name + ".lock")


def _take_lock(path: Path) -> int:
    """Lock ``<ledger>.lock`` (LOCK_EX | LOCK_NB) and write our pid; -1 for a device ledger."""
    try:
        if stat.S_ISCHR(os.stat(path).st_mode):
            return -1  # /dev/null, /dev/full: nothing to protect, and no sidecar in /dev
    except FileNotFoundError:
        pass
    while True:
        fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
            os.close(fd)
            raise _busy(path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, lock_path(path)):
            break
        os.close(fd)  # the holder removed that sidecar as we locked it: lock the new one
    os.ftruncate(fd, 0)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    os.pwrite(fd, f"{os.getpid()} {started}\n".encode(), 0)
    return fd


def _busy(path: Path, holder: list[str]) -> UserError:
    who = f"process {holder[0]}" if holder else "another process"
    since = f" (since {holder[1]})" if len(holder) > 1 else ""
    return UserError(
        f"{path}: the ledger is being written by {who}{since}; two writers would record "
        "every call twice",
        fix="wait for that run to finish (or stop it), or give this run its own --ledger",
    )


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def _release_lock(path: Path, fd: int) -> None:
    """Remove the sidecar while still holding the lock, then release it."""
    with contextlib.suppress(OSError):
        os.unlink(lock_path(path))
    os.close(fd)


def _cut_back(fd: int, size: int) -> None:
    """Undo a half-written row (best effort: the disk may refuse even this)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)


_FIXES = {
    errno.EROFS: "the file system is read-only: give a writable path with --ledger",
    errno.ENOSPC: "the disk is full: free space or give --ledger on another disk, then "
    "--resume (rows already written are kept)",
    errno.EDQUOT: "the disk quota is exhausted: free space, then --resume",
    errno.EACCES: "check the permissions of the file and its folder, or give another --ledger",
    errno.EPERM: "check the permissions of the file and its folder, or give another --ledger",
    errno.EISDIR: "give a file path for --ledger, not a folder",
    errno.ENOTDIR: "a parent of the ledger path is a file: give another --ledger",
}


def _write_error(path: Path, exc: OSError) -> UserError:
    reason = exc.strerror or str(exc)
    fix = _FIXES.get(exc.errno or 0, "check the path and the disk, or give another --ledger")
    return UserError(f"{path}: cannot write the ledger: {reason} [errno {exc.errno}]", fix=fix)


def _drop_torn_tail(path: Path) -> int:
    """Truncate a torn last line; return how many bytes were dropped. An unterminated last
    line that parses is a row every reader reads (the reader's torn-line rule): it gets its
    newline instead, so that resume, which counts it as done, and the file agree."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return 0
    size = info.st_size
    if size == 0 or not stat.S_ISREG(info.st_mode):
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
                break
            pos = start
        else:
            keep = 0
        fh.seek(keep)
        if _whole_row(fh.read(size - keep)):
            fh.seek(size)
            fh.write(b"\n")
            return 0
        fh.truncate(keep)
        return size - keep


def _whole_row(tail: bytes) -> bool:
    from eloledger.ledger.reader import _parses

    return bool(tail.strip()) and _parses(tail.removeprefix(b"\xef\xbb\xbf"))
