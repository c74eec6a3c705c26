"""Follow a ledger that another process is appending to (``tail -F`` by byte offset).

``poll()`` returns the complete rows added since the last call. The offset only ever moves past
complete lines, so a line that is half-written is read again (whole) at the next poll, and a
torn tail that a restarted writer truncates away is never reported. When the file shrinks below
the offset (truncated) or is replaced (a new inode at the path), the follower starts again from
the beginning of the file and says so in ``resets`` / ``warnings``. Each follower has its own
offset, so any number of them can watch one file.
"""

from __future__ import annotations

import os
import stat as stat_module
from pathlib import Path
from typing import Any

from eloledger.errors import CodedWarning, UserError
from eloledger.ledger.reader import parse_line


class LedgerFollower:
    """Incremental reader of one ledger file; cheap to poll at a few Hz."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        from_start: bool = True,
        max_bytes: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.offset = 0  # bytes consumed: always the end of a complete line
        self.line = 0  # complete lines consumed (for file:line in warnings)
        self.resets = 0  # how often the file was truncated or replaced under us
        self.last_reset: str | None = None  # "truncated" | "replaced" | "rewritten" | None
        self.warnings: list[str] = []
        self.max_bytes = max_bytes  # read at most this much per poll (None: all)
        self._identity: tuple[int, int] | None = None
        if not from_start:
            self._seek_end()

    def poll(self) -> list[dict[str, Any]]:
        """New complete canonical rows since the last call ([] when nothing new or no file)."""
        fh = _open_regular(self.path)
        if fh is None:
            return []
        with fh:
            stat = os.fstat(fh.fileno())
            identity = (stat.st_dev, stat.st_ino)
            if self._identity is not None and identity != self._identity:
                self._restart("replaced")
            elif stat.st_size < self.offset:
                self._restart("truncated")
            self._identity = identity
            if stat.st_size == self.offset:
                return []
            if self.offset and not _ends_line(fh, self.offset):
                self._restart("rewritten")  # truncated and refilled between two polls
            fh.seek(self.offset)
            want = stat.st_size - self.offset
            if self.max_bytes is not None:
                want = min(want, self.max_bytes)
            chunk = fh.read(want)
        end = chunk.rfind(b"\n")
        if end < 0:
            if self.max_bytes is not None and len(chunk) == self.max_bytes:
                self.max_bytes *= 2  # one line longer than the window: widen it
            return []
        complete = chunk[: end + 1]
        self.offset += len(complete)
        return self._parse(complete)

    def _parse(self, data: bytes) -> list[dict[str, Any]]:
        rows = []
        for line in data.split(b"\n")[:-1]:
            self.line += 1
            if not line.strip():
                continue
            try:
                rows.append(parse_line(line, where=f"{self.path}:{self.line}"))
            except UserError as exc:
                self.warnings.append(CodedWarning("ledger.line_skipped", f"skipped {exc.one_line()}"))
        return rows

    def _restart(self, why: str) -> None:
        self.resets += 1
        self.last_reset = why
        self.warnings.append(f"{self.path}: file was {why}; reading it again from the start")
        self.offset = 0
        self.line = 0

    def _seek_end(self) -> None:
        """Start after the last complete line that is there now."""
        fh = _open_regular(self.path)
        if fh is None:
            return
        with fh:
            stat = os.fstat(fh.fileno())
            self._identity = (stat.st_dev, stat.st_ino)
            data = fh.read()
        end = data.rfind(b"\n") + 1
        self.offset = end
        self.line = data.count(b"\n", 0, end)


def _ends_line(fh: Any, offset: int) -> bool:
    """True when the byte before ``offset`` is still the newline we stopped after."""
    fh.seek(offset - 1)
    return fh.read(1) == b"\n"


def _open_regular(path: Path) -> Any:
    """The file opened for reading, or None when absent, unreadable or not a regular file.

    ``O_NONBLOCK``: opening a FIFO must never block the follower (it is polled from the UI).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    if not stat_module.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")
