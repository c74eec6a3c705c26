"""Atomic, symlink-following file writes: a reader or a crash sees the old file or the new one.

Why: a config file half-written when the machine dies (or when eloledger is killed) breaks the
user's coding CLI. We write a temp file in the *same* folder as the real file (so the rename is
atomic on one filesystem), fsync it, rename it over the real file and fsync the folder. A
symlinked config (dotfiles repos do this) is resolved first, so the link stays a link.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

SECRET_MODE = 0o600
STALE_TEMP_SECONDS = 60.0  # a temp file this old belongs to no live writer
_UTF8_BOM = "\ufeff"
_held = threading.local()  # lock path -> depth, so a holder may re-enter its own lock


def real_path(path: Path) -> Path:
    """The file a (possibly symlinked, possibly dangling) path really names."""
    return Path(os.path.realpath(path))


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist (a folder in the way is an error).

    A FIFO, socket or device is refused before it is opened: reading one would block forever
    or never end.
    """
    from eloledger.errors import UserError

    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        raise UserError(
            f"{path}: not a regular file (a pipe, socket or device); nothing was read",
            fix="replace it with a regular file",
        )
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def open_regular(path: Path | str) -> BinaryIO | None:
    """``open(path, "rb")`` for a regular file only; None for anything else (a FIFO, socket or
    device: never blocks, a FIFO's writer is never waited for) or a file that cannot be opened.

    Why: log folders are read while other programs (or an agent) write them, and a FIFO named
    ``*.jsonl`` opened the plain way blocks its reader forever. ``O_NONBLOCK`` makes the open
    return at once, ``fstat`` on the descriptor (not the name) decides.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
    except OSError:
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def read_config_text(path: Path) -> str | None:
    """:func:`read_text` for a config about to be edited: a folder, non-UTF-8 bytes or a BOM
    refuse."""
    from eloledger.errors import UserError

    try:
        return refuse_bom(read_text(path), path)
    except IsADirectoryError:
        raise UserError(f"{path}: is a folder, not a file; nothing was written") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text ({exc.reason}); nothing was written") from None
    except OSError as exc:  # a symlink loop, no permission, an I/O error
        raise UserError(
            f"{path}: cannot be read ({exc.strerror or exc}); nothing was written",
            fix="check the file (a symlink loop? its permissions?)",
        ) from None


def refuse_bom(text: str | None, path: Path) -> str | None:
    """A config that starts with a UTF-8 BOM is named instead of failing to parse at line 1."""
    from eloledger.errors import UserError

    if text is not None and text.startswith(_UTF8_BOM):
        raise UserError(
            f"{path}: starts with a UTF-8 BOM; nothing was read or written",
            fix="save it without BOM (UTF-8 without signature)",
        )
    return text


@contextlib.contextmanager
def exclusive_lock(path: Path, *, what: str, timeout: float = 30.0) -> Iterator[None]:
    """Hold an advisory ``flock`` on ``path`` (created 0600) for the block; re-entrant per thread.

    Why flock: the kernel drops it when the holder dies, so a killed process never leaves a
    stale lock behind. The holder's pid is written into the file so that a waiter that gives
    up after ``timeout`` seconds can name it.
    """
    from eloledger.errors import UserError

    depths: dict[str, int] = _held.__dict__.setdefault("depths", {})
    key = str(path)
    if depths.get(key):
        depths[key] += 1
        try:
            yield
        finally:
            depths[key] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, SECRET_MODE)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                    raise UserError(
                        f"another eloledger process (pid {holder}) is {what}; waited "
                        f"{timeout:g} s for it (lock {path})",
                        fix="let it finish and run the command again",
                    ) from None
                time.sleep(0.02)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        depths[key] = 1
        try:
            yield
        finally:
            depths.pop(key, None)
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def sha256_text(text: str | None) -> str:
    return "" if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def atomic_write(path: Path, text: str, *, secret: bool = False, mode: int | None = None) -> Path:
    """Replace ``path``'s real file with ``text`` atomically; return the real path written.

    The mode of an existing file is kept; ``secret`` forces 0600 (and never widens it).
    """
    target = real_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644 & ~_umask()
    if secret:
        mode = SECRET_MODE
    remove_stale_temps(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_dir(target.parent)
    return target


def remove_stale_temps(target: Path, older_than: float = STALE_TEMP_SECONDS) -> None:
    """Delete temp files a killed writer left beside ``target`` (they may hold a key)."""
    cutoff = time.time() - older_than
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if leftover.lstat().st_mtime < cutoff:
                leftover.unlink()


def remove_file(path: Path) -> None:
    """Delete the real file behind ``path`` (used to roll back a file that did not exist)."""
    target = real_path(path)
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    fsync_dir(target.parent)


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
