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

Memory is bounded by the read chunk and ``window`` pending calls per file, not by file size;
with workers, by the calls of one round of files (``ROUND_BYTES``; a larger file is streamed).
A FIFO, socket or device named like a log is never opened for reading (``_open_regular``:
a FIFO would block the scan forever).
"""

from __future__ import annotations

import importlib
import os
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any, Protocol

import orjson

from eloledger.agents.logcall import FALLBACK, Call, Unknown
from eloledger.ledger.row import LedgerRow
from eloledger.ledger.writer import encode_row

CHUNK = 1 << 20
# With workers: a file with more new bytes than this is streamed by the parent (a worker holds
# a file's calls until it hands them over), and the files go to the workers in rounds of at
# most ROUND_BYTES (each process holds the calls of its share of one round).
STREAM_BYTES = 64 << 20
ROUND_BYTES = 256 << 20
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
        emit: Callable[[LedgerRow], None],
        emit_line: Callable[[bytes], None] | None = None,
        keys: set[str] | None = None,
        files: dict[str, FileState] | None = None,
        settle_s: float = 5.0,
        window: int = WINDOW,
        progress: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.fmt = fmt
        self.emit = emit
        self.emit_line = emit_line  # rows encoded by ledger.writer.encode_row: needed by a pool
        self.keys = keys if keys is not None else set()
        self.files = files if files is not None else {}
        self.settle_s = settle_s
        self.window = window
        self.progress = progress
        self.clock = clock
        self.report = ScanReport()
        self.needles: tuple[bytes, ...] = getattr(fmt, "NEEDLES", ())
        # stats the caller took just before this scan (the importer's listing): one stat per
        # file saved; a polling caller (watch) leaves it empty so each poll stats afresh
        self.known: dict[str, os.stat_result] = {}
        self._late: Callable[[Any], None] = self._no_tokens  # the file being read's (_flush)

    def scan(self, paths: Iterable[Path], pool: Any = None) -> ScanReport:
        """Scan each file in order; with a pool (``agents.forkpool``), files are parsed in it.

        Workers only turn lines into calls (the costly part); the key index, the window and
        the hold are applied here, in file order, exactly as a serial scan applies them.
        """
        if pool is None or self.emit_line is None:
            for path in paths:
                self.scan_file(path)
            return self.report
        opened = []
        for path in dict.fromkeys(paths):
            if (found := self._open(path)) is not None:
                os.close(found[0])  # the worker opens it again (checked: the same inode)
                opened.append((path, found[1], found[2]))
        tasks = [
            (self.fmt.__name__, str(p), s.offset, s.line, dict(s.parser), self.needles, st.st_ino)
            if st.st_size - s.offset <= STREAM_BYTES
            else None  # a huge log is read here, streamed: a worker holds a file's calls
            for p, s, st in opened
        ]
        weights = [
            st.st_size - s.offset if task else 0
            for (_, s, st), task in zip(opened, tasks, strict=True)
        ]
        spans = _in_rounds(pool, tasks, weights)
        for (path, state, stat), span in zip(opened, spans, strict=True):
            if span is None:  # too large for a worker, or replaced since our stat: read it here
                self.report.files -= 1
                self.scan_file(path)
                continue
            items, offset, line, nbytes, waiting, parser_state = span
            self.report.bytes_read += nbytes
            self.report.waiting_lines += waiting
            pending: OrderedDict[str, list[Any]] = OrderedDict()
            self._take(items, path, pending)
            self._settle(state, stat, pending, offset, line, parser_state)
            if self.progress is not None:
                self.progress(nbytes)
        return self.report

    def scan_file(self, path: Path) -> None:
        """Read one file's new complete lines: one open, one ``fstat`` and, for a file under
        ``CHUNK``, one read (8,000 small sessions made the per-file syscalls a third of an
        import)."""
        opened = self._open(path)
        if opened is None:
            return
        fd, state, stat = opened
        parser = self.fmt.Parser(path, dict(state.parser))
        pending: OrderedDict[str, list[Any]] = OrderedDict()
        progress = self.progress
        self._late = self._late_maker(parser)

        def take(items: list[Item], nbytes: int) -> None:
            self._take(items, path, pending)
            if progress is not None:
                progress(nbytes)

        try:
            offset, line, nbytes, waiting = _read_lines(
                fd, state.offset, state.line, stat.st_size, parser, self.needles, None, take
            )
        finally:
            os.close(fd)
        self.report.bytes_read += nbytes
        self.report.waiting_lines += waiting
        self._settle(state, stat, pending, offset, line, parser.state)
        self._late = self._no_tokens

    def _late_maker(self, parser: Any) -> Callable[[Any], None]:
        """Writes one peek token of ``parser`` (see :meth:`_flush`)."""
        emit_line, encode = self.emit_line, getattr(parser, "encode", None)
        if emit_line is not None and encode is not None:
            return lambda token: emit_line(encode(token))
        source, emit = self.fmt.SOURCE, self.emit
        return lambda token: emit(parser.call(token).row(source))

    @staticmethod
    def _no_tokens(token: Any) -> None:
        raise TypeError(f"a parser token outside its file: {token!r}")

    def _open(self, path: Path) -> tuple[int, FileState, os.stat_result] | None:
        """An open descriptor, the file's state and stat if it has new bytes to read (counted
        in ``report.files``); None, with nothing left open, otherwise."""
        if self._unchanged(path):
            return None
        opened = _open_regular(path)  # a FIFO, socket or device named *.jsonl is never read
        if opened is None:
            return None
        fd, stat = opened
        try:
            state = self._state_for(str(path), stat, fd)
        except OSError:
            os.close(fd)
            return None
        if stat.st_size == state.offset:
            os.close(fd)
            return None
        self.report.files += 1
        return fd, state, stat

    def _settle(
        self,
        state: FileState,
        stat: os.stat_result,
        pending: OrderedDict,
        offset: int,
        line: int,
        parser_state: dict[str, Any],
    ) -> None:
        """Write the file's pending calls, holding back the last one of a file still written."""
        hold = None
        if pending and self.clock() - stat.st_mtime < self.settle_s:
            hold = pending.popitem(last=True)[1]
            self.report.held += 1
        while pending:
            self._flush(pending.popitem(last=False)[1][0])
        if hold is not None:
            offset, line = hold[1], hold[2] - 1
        state.offset, state.line, state.parser = offset, line, parser_state

    def take_whole(self, items: Iterable[Call | Unknown], where: str) -> None:
        """A log read whole (inspect_ai): every call is final, only the key index dedupes."""
        self.report.files += 1
        for item in items:
            if isinstance(item, Unknown):
                self._unknown(item, where)
            elif item.key in self.keys:
                self.report.duplicates += 1
            else:
                self._flush((item.key, 1, 0, 0, 0, "", item))

    # -- one file --------------------------------------------------------------------------------

    def _unchanged(self, path: Path) -> bool:
        """Same file, same size as when last read: skip it without opening (cheap when polled)."""
        name = str(path)
        state = self.files.get(name)
        if state is None:
            return False
        stat = self.known.get(name)
        if stat is None:
            try:
                stat = os.stat(path)
            except OSError:
                return True
        return (stat.st_dev, stat.st_ino) == (state.dev, state.ino) and stat.st_size == state.offset

    def _state_for(self, name: str, stat: os.stat_result, fd: int) -> FileState:
        """The saved state, unless the file was replaced, truncated or rewritten under us."""
        state = self.files.get(name)
        identity = (stat.st_dev, stat.st_ino)
        if state is not None and (
            (state.dev, state.ino) != identity
            or stat.st_size < state.offset
            or not _ends_line(fd, state.offset)
        ):
            self.report.restarted.append(name)
            state = None
        if state is None:
            state = FileState(dev=stat.st_dev, ino=stat.st_ino)
            self.files[name] = state
        return state

    def _take(self, items: list[Item], path: Path, pending: OrderedDict) -> None:
        """Apply parsed lines in file order: unknown shapes, the key index, the window.

        A new call waits in the file's window (``[item, first offset, first line]``); the
        oldest is written when the window is full. (One loop, no call per item: this runs
        for every call of an import.)
        """
        keys, report, window = self.keys, self.report, self.window
        duplicates = repeats = 0
        for item in items:
            key = item[0]
            if key is None:
                self._unknown(item[6], f"{path}:{item[3]}")
            elif key in keys:
                duplicates += item[1]
            elif (entry := pending.get(key)) is None:
                pending[key] = [item, item[2], item[3]]
                repeats += item[1] - 1
                if len(pending) > window:
                    self._flush(pending.popitem(last=False)[1][0])
            else:
                repeats += item[1]
                entry[0] = _merged(entry[0], item)
        report.duplicates += duplicates
        report.repeats += repeats

    def _flush(self, item: Item) -> None:
        """Write one call: a worker's call comes encoded, a Call becomes a row here, and a
        parser's peek token (the serial scan) is made into its row only now: a call dropped
        as a duplicate is never encoded."""
        self.keys.add(item[0])
        payload = item[6]
        if type(payload) is bytes:
            self.emit_line(payload)  # type: ignore[misc]
        elif isinstance(payload, Call):
            self.emit(payload.row(self.fmt.SOURCE))
        else:
            self._late(payload)
        self.report.calls += 1

    def _unknown(self, item: Unknown, where: str) -> None:
        if not item.usage_like:
            self.report.ignored[item.shape] += 1
            return
        self.report.unknown[item.shape] += 1
        examples = self.report.where.setdefault(item.shape, [])
        if len(examples) < EXAMPLES:
            examples.append(where)


# One parsed line: (call key, how many consecutive lines of that call it stands for, byte
# offset and number of its first line, total tokens, merge rule, the Call or its encoded row);
# an unknown shape is (None, 1, offset, line, 0, "", the Unknown).
Item = tuple[Any, int, int, int, int, str, Any]


def _merged(kept: Item, item: Item) -> Item:
    """Two lines of one call in one file: the merge rule of the call's log format."""
    if item[5] == "last" or (item[5] == "largest" and item[4] > kept[4]):
        return item
    return kept


def _fold(items: list[Item], new: Item) -> None:
    """Append one line's item, folded into the last one when it is the same call (the run's
    line count grows; which line's usage stands is the merge rule, :func:`_merged`)."""
    last = items[-1] if items else None
    if last is not None and last[0] == new[0]:
        kept = _merged(last, new)
        items[-1] = (kept[0], last[1] + 1, last[2], last[3], *kept[4:])
    else:
        items.append(new)


def _open_regular(path: Path) -> tuple[int, os.stat_result] | None:
    """A descriptor of a regular file and its stat; None for anything else or no file.

    ``fsutil.open_regular``'s rule (``O_NONBLOCK`` so a FIFO never blocks the open, ``fstat``
    of the descriptor decides) without the file object and its two ``fcntl`` calls: the
    reads below are ``pread`` of known sizes, and a regular file ignores ``O_NONBLOCK``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not S_ISREG(stat.st_mode):
        os.close(fd)
        return None
    return fd, stat


def _read_lines(
    fd: int,
    offset: int,
    line: int,
    size: int,
    parser: Any,
    needles: tuple[bytes, ...],
    encode: bool | None,
    take: Callable[[list[Item], int], None],
) -> tuple[int, int, int, bool]:
    """Parse the complete lines of ``fd`` from ``offset`` up to ``size`` (its size when it was
    opened: what is appended later is the next scan's), ``take(items, bytes)`` per chunk.

    Returns the offset and line number after the last complete line, the bytes read and
    whether a torn last line waits. Each read starts at a line and asks for what the file
    holds (at most ``CHUNK``: a larger buffer than the file is allocated whole, four times
    slower); the partial line at its end is read again by the next one (gluing it to the
    next chunk copied every chunk: a tenth of a large import). A line longer than ``CHUNK``
    is read whole, the read doubling until it holds one.
    """
    start, want, tail = offset, CHUNK, b""
    while offset < size:
        buf = os.pread(fd, min(want, size - offset), offset)
        if not buf:  # truncated under us
            break
        end = buf.rfind(b"\n") + 1
        reached = offset + len(buf) >= size
        if end == 0:  # no complete line in it
            if reached:
                tail = buf
                break
            want *= 2
            continue
        items, nlines = _parse_chunk(buf, end, offset, line, parser, needles, encode)
        take(items, end)
        offset, line, want = offset + end, line + nlines, CHUNK
        if reached:
            tail = buf[end:]
            break
    if tail:
        take([], len(tail))
    return offset, line, offset + len(tail) - start, bool(tail.strip())


def _parse_chunk(
    buf: bytes,
    end: int,
    offset: int,
    first: int,
    parser: Any,
    needles: tuple[bytes, ...],
    encode: bool | None = False,
) -> tuple[list[Item], int]:
    """The complete lines ``buf[:end]`` -> (items, number of lines).

    Lines are found with ``bytes.find`` (memchr) and only the ones worth reading are copied
    out: lines without a needle that are plainly one object (``{`` … ``}``, the bulk of every
    log) are skipped where they lie; the rest are read by :class:`_LineReader`. (A
    ``bytes.split`` of the chunk copied every line: twice as slow.) With ``encode``, calls
    a parser can encode itself come as ledger lines; with None, as the parser's peek tokens
    (see :meth:`_LineReader.finish`).
    """
    find, rfind = buf.find, buf.rfind
    single = needles[0] if len(needles) == 1 else None
    reader = _LineReader(parser, needles)
    hit, other = reader.hit, reader.line
    start, number = 0, first
    while start < end:
        stop = find(b"\n", start, end)
        number += 1
        if not needles or stop == start or buf[start] != 123 or buf[stop - 1] != 125:  # {…}
            other(buf[start:stop], offset + start, number)
        elif (  # from the end: Claude's usage sits after the content, near the line's end
            rfind(single, start, stop) >= 0
            if single is not None
            else any(rfind(n, start, stop) >= 0 for n in needles)
        ):
            hit(buf[start:stop], offset + start, number)
        start = stop + 1
    return reader.finish(encode), number - first


class _LineReader:
    """Lines -> calls and unknown shapes; consecutive lines of one call folded into one item.

    Folding a run is exact: nothing between two lines of one run can change the key index
    (only a new key flushes the window), so the scanner would merge or drop them all alike.
    A parser with ``peek(raw)`` (Claude Code) answers (key, total, merge, token) for the usual
    line: runs are folded on that, and only the winner of a run becomes a call.
    """

    def __init__(self, parser: Any, needles: tuple[bytes, ...]) -> None:
        self.parser = parser
        self.needles = needles
        self.items: list[Item] = []
        self.peek = getattr(parser, "peek", None)
        self.fast = getattr(parser, "feed_line", None)
        self.tokens = False  # some items still hold a peek token instead of their call

    def line(self, line: bytes, start: int, number: int) -> None:
        """Any line: blanks skipped, needles checked, then :meth:`hit`."""
        raw = line.strip()
        if not raw:
            return
        if self.needles and not any(n in raw for n in self.needles):
            if raw[:1] == b"{" and raw[-1:] == b"}":
                return  # an object that cannot carry tokens: not worth parsing (most lines)
            self.items.append((None, 1, start, number, 0, "", Unknown("not JSON")))
            return
        self.hit(raw, start, number)

    def hit(self, raw: bytes, start: int, number: int) -> None:
        """A stripped line holding a needle (or any line, for a format without needles)."""
        items = self.items
        if self.peek is not None:
            out = self.peek(raw)
            if type(out) is tuple:  # _fold, spelled out: this runs for every line with usage
                self.tokens = True
                key, total, merge, token = out
                last = items[-1] if items else None
                if last is not None and last[0] == key:
                    kept = _merged(last, (key, 1, start, number, total, merge, token))
                    items[-1] = (key, last[1] + 1, last[2], last[3], *kept[4:])
                else:
                    items.append((key, 1, start, number, total, merge, token))
                return
        else:
            out = FALLBACK if self.fast is None else self.fast(raw)
        if out is FALLBACK:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                items.append((None, 1, start, number, 0, "", Unknown("not JSON")))
                return
            if not isinstance(obj, dict):
                items.append((None, 1, start, number, 0, "", Unknown("not a JSON object")))
                return
            out = self.parser.feed(obj)
        for item in out if isinstance(out, list) else [out]:
            if item is None:
                continue
            if isinstance(item, Unknown):
                items.append((None, 1, start, number, 0, "", item))
                continue
            _fold(items, (item.key, 1, start, number, item.usage.total_tokens, item.merge, item))

    def finish(self, encode: bool | None) -> list[Item]:
        """The items, each peek token turned into its call (``encode``: its ledger line,
        when the parser has ``encode(token)``, the same bytes as ``encode_row(call.row())``;
        None: tokens left as they are, made by the scanner when it writes them).
        """
        if not self.tokens or encode is None:
            return self.items
        make = self.parser.encode if encode and hasattr(self.parser, "encode") else None
        make = make or self.parser.call
        return [
            it if it[0] is None or isinstance(it[6], Call) else (*it[:6], make(it[6]))
            for it in self.items
        ]


def _in_rounds(pool: Any, tasks: list[tuple | None], weights: list[int]) -> Iterable[Any]:
    """``pool.imap(_parse_file, ...)`` over consecutive rounds of at most ``ROUND_BYTES``: each
    process holds the calls of its share of one round, never of the whole import."""
    lo, acc = 0, 0
    for hi, weight in enumerate(weights, 1):
        acc += weight
        if acc >= ROUND_BYTES or hi == len(weights):
            yield from pool.imap(_parse_file, tasks[lo:hi], weights[lo:hi])
            lo, acc = hi, 0


def _parse_file(task: tuple | None) -> tuple | None:
    """In a worker: parse one file from its saved offset (None if it is no longer that file,
    or it is one the parent streams itself)."""
    if task is None:
        return None
    fmt_name, name, offset, line, parser_state, needles, ino = task
    path = Path(name)
    parser_module = importlib.import_module(fmt_name)
    parser = parser_module.Parser(path, parser_state)
    items: list[Item] = []
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, stat = opened
    try:
        if stat.st_ino != ino:
            return None
        offset, line, nbytes, waiting = _read_lines(
            fd,
            offset,
            line,
            stat.st_size,
            parser,
            needles,
            True,
            lambda found, _: items.extend(found),
        )
    finally:
        os.close(fd)
    source = parser_module.SOURCE
    items = [
        it if it[0] is None or type(it[6]) is bytes else (*it[:6], encode_row(it[6].row(source)))
        for it in items
    ]  # rows encoded here, so the parent only compares keys and writes bytes
    return items, offset, line, nbytes, waiting, parser.state


def _ends_line(fd: int, offset: int) -> bool:
    """A saved offset always follows a newline; anything else means the file was rewritten."""
    return offset == 0 or os.pread(fd, 1, offset - 1) == b"\n"
