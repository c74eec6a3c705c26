"""``eloledger import``: agent session logs -> ledger rows, incrementally and exactly once.

The ledger is the truth: the call keys already imported are read back from it at the start, so a
crash between writing rows and saving the offsets can only make the next import re-read some
bytes, never write a row twice. The offsets live beside the ledger in ``LEDGER.import.json``
(written atomically); a lock file keeps two imports from writing one ledger at once.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import compress, repeat
from operator import contains
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import orjson

from eloledger.agents.importplan import Plan, scan_planned
from eloledger.agents.logcall import row_key
from eloledger.agents.logscan import FileState, LogScanner, ScanReport
from eloledger.clientfacts import client_name
from eloledger.errors import UserError
from eloledger.fsutil import atomic_write
from eloledger.gcpause import collector_paused
from eloledger.ledger.row import LedgerRow, row_from_dict
from eloledger.ledger.writer import LedgerWriter, encode_row

STATE_VERSION = 1
KINDS = ("claude-code", "codex", "gemini-cli", "inspect")


def log_format(kind: str) -> ModuleType:
    """The ``logs`` module of one CLI (``inspect`` reads whole files: see ``agents.inspect_ai``).

    ``gemini``, the kind's old name, is still read as ``gemini-cli``.
    """
    kind = client_name(kind)
    if kind == "claude-code":
        from eloledger.agents.claude_code import logs
    elif kind == "codex":
        from eloledger.agents.codex import logs
    elif kind == "gemini-cli":
        from eloledger.agents.gemini_cli import logs
    elif kind == "inspect":
        from eloledger.agents import inspect_ai as logs
    else:
        raise UserError(f"unknown log kind {kind!r}", fix=f"use one of {', '.join(KINDS)}")
    return logs


def default_ledger(kind: str) -> Path:
    """One ledger per source in eloledger's data dir."""
    from eloledger.locations import imports_dir

    return imports_dir() / f"{log_format(kind).SOURCE}.jsonl"


def default_roots(kind: str, env: Mapping[str, str] | None = None) -> list[Path]:
    return list(log_format(kind).default_roots(env))


def find_logs(kind: str, paths: Sequence[Path]) -> list[Path]:
    """Every log file under the given folders (or the files themselves), oldest first.

    Oldest first because a resumed or forked session copies earlier calls into a newer file:
    reading the original first attributes each call to the session that made it.
    """
    return [path for path, _ in _listing(kind, paths)]


_Listed = tuple[Path, os.stat_result | None]


def _listing(kind: str, paths: Sequence[Path]) -> list[_Listed]:
    """:func:`find_logs` with each file's stat (None: gone), taken once: the order, the
    ledger's own inode, the bytes to read and the files left unchanged all come from it."""
    fmt = log_format(kind)
    walk = getattr(fmt, "walk_files", fmt.find_files)  # unsorted when the format has it
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(walk(path))
        else:
            raise UserError(
                f"{path}: no such file or folder",
                fix=f"pass the folder holding the {fmt.SOURCE} logs",
            )
    listed = [(path, _stat(path)) for path in found]
    return sorted(listed, key=_age_key)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _age_key(item: _Listed) -> tuple[float, str]:
    path, stat = item
    return (stat.st_mtime if stat is not None else 0.0, str(path))


def import_logs(
    kind: str,
    paths: Sequence[Path],
    ledger: Path,
    *,
    settle_s: float = 5.0,
    progress: Callable[[int, int], None] | None = None,
) -> ScanReport:
    """Append every model call in ``paths`` not yet in ``ledger``; returns what happened."""
    with collector_paused():
        return _import_logs(kind, paths, ledger, settle_s, progress)


def _import_logs(
    kind: str,
    paths: Sequence[Path],
    ledger: Path,
    settle_s: float,
    progress: Callable[[int, int], None] | None,
) -> ScanReport:
    fmt = log_format(kind)
    ledger = Path(ledger)
    listed = _without(_listing(kind, paths), ledger)
    files = [path for path, _ in listed]
    if ledger.is_dir():
        raise UserError(f"{ledger}: is a folder", fix="pass a .jsonl file to -o")
    ledger.parent.mkdir(parents=True, exist_ok=True)
    state_path = ledger.with_name(ledger.name + ".import.json")
    with _locked(ledger) as lock_fd, LedgerWriter(ledger) as writer:
        state = load_state(state_path, fmt.SOURCE)
        sizes = _pending(listed, state)
        done, total = 0, sum(sizes)

        def step(nbytes: int) -> None:
            nonlocal done
            done += nbytes
            if progress is not None:
                progress(done, total)

        batch = _Batch(writer)
        scanner = LogScanner(
            fmt,
            emit=batch.append,
            emit_line=batch.append_line,
            keys=ledger_keys(ledger, fmt.SOURCE),
            files=state,
            settle_s=settle_s,
            progress=step,
        )
        scanner.known = {str(path): stat for path, stat in listed if stat is not None}
        if kind == "inspect":
            _scan_whole(scanner, files)
            plan = Plan(1)
        else:  # workers, if any, are forked under the lock: each closes it first
            plan = scan_planned(scanner, files, sizes, child_closes=(lock_fd,))
        batch.flush()  # every row is in the ledger before the offsets that follow them
        save_state(state_path, fmt.SOURCE, state)
    # ScanReport belongs to the scanner; the zero-usage count is the batch's (see _Batch)
    scanner.report.usage_missing = batch.zero_usage  # type: ignore[attr-defined]
    scanner.report.plan = plan  # type: ignore[attr-defined]
    return scanner.report


class _Batch:
    """Rows gathered into one ``write(2)`` per ``size`` bytes (one per row cost a sixth of an
    import). A crash loses only rows whose offsets were not saved yet: the next import reads
    them again, and the keys already in the ledger keep anything from being written twice.

    The zero-usage rule of every reader (``doctor --ledger``, ``tokens``, the TUI): an ok call
    whose log says 0 prompt or 0 total tokens was not free, its usage is missing. Such rows are
    written with ``usage_source = "missing"`` and ``error_class = "zero_usage"`` and counted, so
    the import says so instead of adding free calls."""

    def __init__(self, writer: LedgerWriter, size: int = 1 << 20) -> None:
        self.writer = writer
        self.size = size
        self.lines: list[bytes] = []
        self.pending = 0
        self.zero_usage = 0

    def append(self, row: LedgerRow) -> None:
        self.append_line(encode_row(row))

    def append_line(self, data: bytes) -> None:
        if _ZERO_PROMPT in data or _ZERO_TOTAL in data:  # rare: parse only these
            data = self._zero_usage(data)
        self.lines.append(data)
        self.pending += len(data)
        if self.pending >= self.size:
            self.flush()

    def flush(self) -> None:
        lines, self.lines, self.pending = self.lines, [], 0
        self.writer.append_lines(lines)

    def _zero_usage(self, data: bytes) -> bytes:
        row = orjson.loads(data)
        if row.get("status") != "ok" or row.get("usage_source") in ("missing", "estimated"):
            return data
        if row.get("prompt_tokens") and row.get("total_tokens"):
            return data
        self.zero_usage += 1
        row["usage_source"] = "missing"
        row["error_class"] = row.get("error_class") or "zero_usage"
        return encode_row(row_from_dict(row))  # a row read back: its names are checked again


# A count starting with 0 as encode_row writes it (msgspec, compact): the only rows worth parsing
# here (JSON has no 01, so this is 0 itself or 0.x, which the parse then tells apart).
_ZERO_PROMPT = b'"prompt_tokens":0'
_ZERO_TOTAL = b'"total_tokens":0'


def _scan_whole(scanner: LogScanner, files: list[Path]) -> None:
    """inspect logs are rewritten whole: re-read a file only when its size or mtime changed."""
    from eloledger.agents import inspect_ai

    for path in files:
        stat = path.stat()
        state = scanner.files.get(str(path))
        if state is not None and state.parser.get("stamp") == [stat.st_size, stat.st_mtime_ns]:
            continue
        scanner.take_whole(inspect_ai.read_log(path), str(path))
        scanner.report.bytes_read += stat.st_size
        scanner.files[str(path)] = FileState(
            dev=stat.st_dev,
            ino=stat.st_ino,
            offset=stat.st_size,
            parser={"stamp": [stat.st_size, stat.st_mtime_ns]},
        )


def _without(listed: list[_Listed], ledger: Path) -> list[_Listed]:
    """``listed`` minus the ledger itself (compared by inode: no resolve per file)."""
    try:
        own = os.stat(ledger)
    except OSError:
        return listed
    return [
        (path, st)
        for path, st in listed
        if st is None or (st.st_dev, st.st_ino) != (own.st_dev, own.st_ino)
    ]


class _Keyed(msgspec.Struct):
    """The fields :func:`row_key` reads, as the importer writes them (text or absent)."""

    source: str | None = None
    dedupe_key: str | None = None
    call_id: str | None = None


_decode_keyed = msgspec.json.Decoder(_Keyed).decode_lines
_KEYS_CHUNK = 1 << 20  # python allocates the whole chunk to read it, even at the end


def ledger_keys(ledger: Path, source: str) -> set[str]:
    """Keys of the calls this source already has in the ledger (read in chunks).

    Lines naming the source are decoded in bulk by msgspec; a chunk holding anything else
    (a torn last line, another type) is read line by line with orjson, as it always was.
    """
    keys: set[str] = set()
    try:
        fh = open(ledger, "rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        return keys
    needle = source.encode()
    tail = b""
    with fh:
        while True:
            chunk = fh.read(_KEYS_CHUNK)
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop() if chunk else b""
            mine = list(compress(lines, map(contains, lines, repeat(needle))))
            try:
                rows = _decode_keyed(b"\n".join(mine))
            except (msgspec.DecodeError, msgspec.ValidationError):
                _keys_by_line(mine, source, keys)
            else:
                for row in rows:
                    if row.source == source and (key := row.dedupe_key or row.call_id):
                        keys.add(key)
            if not chunk:
                return keys


def _keys_by_line(lines: list[bytes], source: str, keys: set[str]) -> None:
    for raw in lines:
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # a torn last line: the writer cuts it off before appending
        if isinstance(row, dict) and row.get("source") == source:
            key = row_key(row)
            if key:
                keys.add(key)


def load_state(path: Path, source: str) -> dict[str, FileState]:
    """Offsets of an earlier import; an unreadable file only costs a full re-read (keys dedupe)."""
    try:
        data = orjson.loads(path.read_bytes())
        if data.get("version") != STATE_VERSION or data.get("source") != source:
            return {}
        return {name: FileState(**item) for name, item in data["files"].items()}
    except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
        return {}


def save_state(path: Path, source: str, files: dict[str, FileState]) -> None:
    data = {
        "version": STATE_VERSION,
        "source": source,
        "files": {k: _state_json(v) for k, v in files.items()},
    }
    atomic_write(path, orjson.dumps(data).decode())


def _state_json(state: FileState) -> dict[str, Any]:
    """``dataclasses.asdict(state)``, spelled out: asdict deep-copies, 10x slower per file."""
    return {
        "dev": state.dev,
        "ino": state.ino,
        "offset": state.offset,
        "line": state.line,
        "parser": state.parser,
    }


def _pending(listed: list[_Listed], state: dict[str, FileState]) -> list[int]:
    """New bytes of each listed file since the saved offsets (0: gone)."""
    sizes = []
    for path, stat in listed:
        known = state.get(str(path))
        size = stat.st_size if stat is not None else 0
        sizes.append(max(0, size - (known.offset if known else 0)))
    return sizes


@contextmanager
def _locked(ledger: Path) -> Iterator[int]:
    """The import's lock on ``ledger``; yields its descriptor (a forked worker closes it)."""
    lock_path = ledger.with_name(ledger.name + ".import.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(
                f"{ledger}: another import is writing this ledger",
                fix="wait for it to finish, or import into another ledger with -o",
            ) from None
        yield fd
    finally:
        os.close(fd)


def describe(report: ScanReport, ledger: Path) -> list[str]:
    """The report as short lines for a terminal."""
    lines = [
        f"imported {report.calls:,} calls into {ledger} "
        f"({report.files:,} files read, {report.bytes_read / 1e6:,.1f} MB; "
        f"{report.duplicates:,} already imported, {report.repeats:,} repeated lines merged)"
    ]
    if report.held or report.waiting_lines:
        lines.append(
            f"waiting: {report.held} calls in files still being written, "
            f"{report.waiting_lines} unfinished last lines (the next import reads them)"
        )
    if report.restarted:
        lines.append(f"read again from the start (truncated or replaced): {len(report.restarted)}")
    zero = getattr(report, "usage_missing", 0)
    if zero:
        lines.append(
            f"warning: {zero:,} calls have zero token usage in the log: recorded with usage "
            'missing (usage_source = "missing"), not as free calls; the agent\'s gateway '
            "dropped the usage (see 'eloledger doctor --ledger')"
        )
    for shape, count in report.unknown.most_common():
        where = ", ".join(report.where.get(shape, []))
        lines.append(f"unknown line shape: {shape} ×{count} (e.g. {where}) — not counted")
    return lines


def report_json(report: ScanReport, ledger: Path) -> dict[str, Any]:
    return {
        "ledger": str(ledger),
        **report.as_json(),
        "usage_missing": getattr(report, "usage_missing", 0),
        "parallel": getattr(report, "plan", Plan(1)).as_json(),
    }
