"""Incremental, deduplicating scan of agent session logs: byte offsets + a call-key index.

Shared by ``eloledger import`` (which saves the offsets and appends rows to a ledger) and
``watch --claude-code`` (which keeps them in memory). Why it is safe while the CLIs write:

* only complete lines are read; a torn last line is left for the next scan (the saved offset
  always ends a complete line);
* a call whose lines may still be repeated (the last call of a file written less than
  ``settle_s`` seconds ago) is held back and its first line becomes the saved offset, so the next
  scan reads it again whole and merges its repeats (largest/last usage) before writing it;
* every written call's key goes into ``keys``: a key seen again, in this file or another
  (resumed sessions, replayed forks, sidechains), is a duplicate and never written twice;
* a file that shrank or was replaced (new inode) is read again from its start; the key index
  keeps that from double counting.

Memory is bounded by the read chunk and ``window`` pending calls per file, not by file size.
"""

from __future__ import annotations

import os
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from itertools import accumulate, compress, repeat
from operator import and_, contains, not_, or_
from pathlib import Path
from typing import Any, Protocol

import orjson

from eloledger.agents.logcall import FALLBACK, Call, Unknown

CHUNK = 1 << 20
WINDOW = 64  # pending calls per file; Claude's per-block lines of one message sit close together
EXAMPLES = 3  # file:line examples kept per unknown shape


class LineParser(Protocol):
    state: dict[str, Any]

    def feed(self, obj: dict[str, Any]) -> Any: ...


class LogFormat(Protocol):
    """What each CLI's ``logs`` module provides."""

    SOURCE: str

    def find_files(self, root: Path) -> Iterable[Path]: ...

    def Parser(self, path: Path, state: dict[str, Any] | None = None) -> LineParser: ...  # noqa: N802


@dataclass
class FileState:
    """Where the scan of one file stopped: a complete-line offset and the parser's memory."""

    dev: int
    ino: int
    offset: int = 0
    line: int = 0
    parser: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScanReport:
    files: int = 0
    bytes_read: int = 0
    calls: int = 0  # rows emitted
    duplicates: int = 0  # calls whose key was already imported (other file, earlier scan)
    repeats: int = 0  # repeated lines of one call in one file, merged
    held: int = 0  # calls held back until their file settles
    waiting_lines: int = 0  # torn last lines left for the next scan
    restarted: list[str] = field(default_factory=list)  # files read again from the start
    unknown: Counter[str] = field(default_factory=Counter)  # usage-like lines not understood
    where: dict[str, list[str]] = field(default_factory=dict)  # shape -> first file:line
    ignored: Counter[str] = field(default_factory=Counter)  # harmless line types not read

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["unknown"] = [
            {"shape": s, "count": n, "examples": self.where.get(s, [])}
            for s, n in self.unknown.most_common()
        ]
        data["ignored"] = dict(self.ignored.most_common())
        del data["where"]
        return data


class LogScanner:
    """Reads new complete lines of log files and emits one ledger row per new model call."""

    def __init__(
        self,
        fmt: LogFormat,
        *,
        emit: Callable[[dict[str, Any]], None],
        keys: set[str] | None = None,
        files: dict[str, FileState] | None = None,
        settle_s: float = 5.0,
        window: int = WINDOW,
        progress: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.fmt = fmt
        self.emit = emit
        self.keys = keys if keys is not None else set()
        self.files = files if files is not None else {}
        self.settle_s = settle_s
        self.window = window
        self.progress = progress
        self.clock = clock
        self.report = ScanReport()
        self.needles: tuple[bytes, ...] = getattr(fmt, "NEEDLES", ())

    def scan(self, paths: Iterable[Path]) -> ScanReport:
        for path in paths:
            self.scan_file(path)
        return self.report

    def scan_file(self, path: Path) -> None:
        if self._unchanged(path):
            return
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed by the with below
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            return
        with fh:
            stat = os.fstat(fh.fileno())
            state = self._state_for(str(path), stat, fh)
            if stat.st_size == state.offset:
                return
            self.report.files += 1
            parser = self.fmt.Parser(path, dict(state.parser))
            pending: OrderedDict[str, list[Any]] = OrderedDict()
            fh.seek(state.offset)
            offset, line = self._read_lines(fh, path, state, parser, pending)
        hold = None
        if pending and self.clock() - stat.st_mtime < self.settle_s:
            hold = pending.popitem(last=True)[1]
            self.report.held += 1
        while pending:
            self._flush(pending.popitem(last=False)[1][0])
        if hold is not None:
            offset, line = hold[1], hold[2] - 1
        state.offset, state.line, state.parser = offset, line, parser.state

    def take_whole(self, items: Iterable[Call | Unknown], where: str) -> None:
        """A log read whole (inspect_ai): every call is final, only the key index dedupes."""
        self.report.files += 1
        for item in items:
            if isinstance(item, Unknown):
                self._unknown(item, where)
            elif item.key in self.keys:
                self.report.duplicates += 1
            else:
                self._flush(item)

    # -- one file --------------------------------------------------------------------------------

    def _unchanged(self, path: Path) -> bool:
        """Same file, same size as when last read: skip it without opening (cheap when polled)."""
        state = self.files.get(str(path))
        if state is None:
            return False
        try:
            stat = os.stat(path)
        except OSError:
            return True
        return (stat.st_dev, stat.st_ino) == (state.dev, state.ino) and stat.st_size == state.offset

    def _state_for(self, name: str, stat: os.stat_result, fh: Any) -> FileState:
        """The saved state, unless the file was replaced, truncated or rewritten under us."""
        state = self.files.get(name)
        identity = (stat.st_dev, stat.st_ino)
        if state is not None and (
            (state.dev, state.ino) != identity
            or stat.st_size < state.offset
            or not _ends_line(fh, state.offset)
        ):
            self.report.restarted.append(name)
            state = None
        if state is None:
            state = FileState(dev=stat.st_dev, ino=stat.st_ino)
            self.files[name] = state
        return state

    def _read_lines(
        self, fh: Any, path: Path, state: FileState, parser: LineParser, pending: OrderedDict
    ) -> tuple[int, int]:
        offset, line = state.offset, state.line
        tail = b""
        while chunk := fh.read(CHUNK):
            self.report.bytes_read += len(chunk)
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            starts = list(accumulate(map(len, lines), lambda at, n: at + n + 1, initial=offset))
            for i in self._worth_reading(lines):
                self._line(lines[i], starts[i], line + i + 1, path, parser, pending)
            offset, line = starts[-1], line + len(lines)
            if self.progress is not None:
                self.progress(len(chunk))
        if tail.strip():
            self.report.waiting_lines += 1
        return offset, line

    def _worth_reading(self, lines: list[bytes]) -> Iterable[int]:
        """Indexes of the lines :meth:`_line` does more with than return at once, found in bulk.

        Skipped: lines without a needle that are plainly one object (``{`` … ``}``), the bulk
        of every log. The rest (needles, blanks, odd lines) go through :meth:`_line` whole.
        """
        if not self.needles:
            return range(len(lines))
        plain = map(
            and_,
            map(bytes.startswith, lines, repeat(b"{")),
            map(bytes.endswith, lines, repeat(b"}")),
        )
        if len(self.needles) == 1:
            matter = map(contains, lines, repeat(self.needles[0]))
        else:
            matter = map(self._may_matter, lines)
        return compress(range(len(lines)), map(or_, matter, map(not_, plain)))

    def _line(
        self,
        raw: bytes,
        offset: int,
        line: int,
        path: Path,
        parser: LineParser,
        pending: OrderedDict,
    ) -> None:
        raw = raw.strip()
        if not raw:
            return
        if self.needles and not self._may_matter(raw):
            if raw[:1] == b"{" and raw[-1:] == b"}":
                return  # an object that cannot carry tokens: not worth parsing (most lines)
            self._unknown(Unknown("not JSON"), f"{path}:{line}")
            return
        fast = getattr(parser, "feed_line", None)
        out = FALLBACK if fast is None else fast(raw)
        if out is FALLBACK:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                self._unknown(Unknown("not JSON"), f"{path}:{line}")
                return
            if not isinstance(obj, dict):
                self._unknown(Unknown("not a JSON object"), f"{path}:{line}")
                return
            out = parser.feed(obj)
        for item in out if isinstance(out, list) else [out]:
            if item is None:
                continue
            if isinstance(item, Unknown):
                self._unknown(item, f"{path}:{line}")
            elif item.key in self.keys:
                self.report.duplicates += 1
            else:
                self._pend(item, offset, line, pending)

    def _may_matter(self, raw: bytes) -> bool:
        needles = self.needles
        if len(needles) == 1:
            return needles[0] in raw
        return any(n in raw for n in needles)

    def _pend(self, call: Call, offset: int, line: int, pending: OrderedDict) -> None:
        entry = pending.get(call.key)
        if entry is None:
            pending[call.key] = [call, offset, line]
            if len(pending) > self.window:
                self._flush(pending.popitem(last=False)[1][0])
            return
        self.report.repeats += 1
        kept: Call = entry[0]
        if call.merge == "last" or (
            call.merge == "largest" and call.usage.total_tokens > kept.usage.total_tokens
        ):
            entry[0] = call

    def _flush(self, call: Call) -> None:
        self.keys.add(call.key)
        self.emit(call.row(self.fmt.SOURCE))
        self.report.calls += 1

    def _unknown(self, item: Unknown, where: str) -> None:
        if not item.usage_like:
            self.report.ignored[item.shape] += 1
            return
        self.report.unknown[item.shape] += 1
        examples = self.report.where.setdefault(item.shape, [])
        if len(examples) < EXAMPLES:
            examples.append(where)


def _ends_line(fh: Any, offset: int) -> bool:
    """A saved offset always follows a newline; anything else means the file was rewritten."""
    if offset == 0:
        return True
    fh.seek(offset - 1)
    return fh.read(1) == b"\n"
