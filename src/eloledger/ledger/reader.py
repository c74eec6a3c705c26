"""Read a JSONL token ledger fast, into columns, with exact errors for bad lines.

The fast path (:mod:`eloledger.ledger.fastread`) decodes the file in bulk with msgspec into
rows holding only the fields the caller needs, and applies the canonical rules column-wise.
Anything unusual (a bad line, a blank line, an odd type) sends the read down the exact path:
orjson line by line through :func:`eloledger.ledger.canonical.canonicalize`, which names the
file and line of any error.

A torn last line (no trailing newline and not parseable: a crash mid-write) is skipped with a
warning. A malformed line anywhere else is an error: silently dropping rows from the middle of
a ledger would change the totals without anyone noticing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson

from eloledger.errors import UserError
from eloledger.ledger.batches import BATCH_BYTES, batch_lines, read_batches
from eloledger.ledger.canonical import canonicalize
from eloledger.ledger.columns import (
    ALL_COLUMNS,
    FACTOR_COLUMNS,
    Columns,
    Factor,
    NeedsExactPath,
    columns_from_rows,
    concat,
)
from eloledger.ledger.fastread import fast_columns
from eloledger.ledger.sources import check_regular, refuse_gzip

Warn = Callable[[str], None]


# The memory bound (README, "Token ledger"): a line longer than LINE_BOUND is decoded lean,
# without the fields whose JSON is over FIELD_BOUND (a transcript in ``content``, say): they are
# never materialised and a warning names the line. Memory then stays about the file's size
# plus the rows' ledger fields, whatever one line holds.
LINE_BOUND = 16 << 20
_PIECE = BATCH_BYTES  # what numbered_rows reads at a time
FIELD_BOUND = 1 << 20
_LEAN = msgspec.json.Decoder(dict[str, msgspec.Raw])


def parse_line(
    line: bytes | str | memoryview, *, where: str = "", warn: Warn | None = None
) -> dict[str, Any]:
    """One ledger line -> canonical row dict; :class:`UserError` naming ``where`` if invalid."""
    if len(line) > LINE_BOUND:
        return canonicalize(_parse_lean(line, where, warn), where=where)
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raw = _parse_nonstandard(line, where, exc)
    return canonicalize(raw, where=where)


def _parse_lean(line: bytes | str | memoryview, where: str, warn: Warn | None) -> Any:
    """A huge line's small fields, decoded; the big ones skipped without being built."""
    try:
        fields = _LEAN.decode(line)
    except RecursionError:
        raise _too_deep(where) from None
    except (msgspec.DecodeError, msgspec.ValidationError):
        try:
            return orjson.loads(bytes(line) if isinstance(line, memoryview) else line)
        except orjson.JSONDecodeError as exc:
            return _parse_nonstandard(line, where, exc)
    kept, dropped = {}, []
    for key, raw in fields.items():
        if len(raw) > FIELD_BOUND:
            dropped.append(f"{key} ({len(raw) >> 20} MiB)")
            continue
        try:
            kept[key] = orjson.loads(bytes(raw))
        except orjson.JSONDecodeError as exc:
            kept[key] = _parse_nonstandard(bytes(raw), where, exc)
    if dropped and warn is not None:
        warn(
            f"{where}: a line of {len(line) >> 20} MiB (over the {LINE_BOUND >> 20} MiB line "
            f"bound): read without {', '.join(dropped)}"
        )
    return kept


MAX_DEPTH = 64  # no ledger row nests deeper; orjson's own limit is 1024


def _too_deep(where: str) -> UserError:
    return UserError(
        f"{where}: nested too deeply (more than {MAX_DEPTH} levels of [ or {{); not a ledger row",
        fix="repair or delete that line; a ledger row is one flat JSON object",
    )


def _parse_nonstandard(line: bytes | str | memoryview, where: str, exc: Exception) -> Any:
    """Accept NaN/Infinity as Python's json writes them (then the field checks decide)."""
    if isinstance(line, memoryview):
        line = bytes(line)
    if _depth_over(line, MAX_DEPTH):
        raise _too_deep(where)  # json.loads would recurse until RecursionError
    try:
        return json.loads(line)
    except RecursionError:
        raise _too_deep(where) from None
    except (ValueError, UnicodeDecodeError):
        raise UserError(
            f"{where}: not valid JSON ({exc})",
            fix="repair or delete that line; every ledger line must be one JSON object",
        ) from None


def open_brackets(data: bytes | np.ndarray) -> np.ndarray:
    """Where ``data`` holds a ``{`` (0x7B) or a ``[`` (0x5B): no other byte has that mask."""
    raw = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
    return (raw & 0xDF) == 0x5B


def none_too_deep(is_open: np.ndarray, rows: int, least: int = MAX_DEPTH) -> bool:
    """Whether no line of a batch can hold more than ``least`` brackets, by one count of the
    batch's brackets (``is_open``, from :func:`open_brackets`).

    A row is an object, so each of the batch's ``rows`` lines that are rows holds at least one
    ``{`` (a line without one fails to decode and sends the read to the exact path, which
    applies the depth rule itself): no line holds more than the count less one per other row.
    The guides' flat rows are told so at once, without counting line by line."""
    return int(np.count_nonzero(is_open)) - max(rows - 1, 0) <= least


def _depth_over(line: bytes | str, limit: int) -> bool:
    """Whether brackets outside strings nest deeper than ``limit`` (a linear scan)."""
    data = line.encode() if isinstance(line, str) else bytes(line)
    depth, in_string, escaped = 0, False, False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def iter_rows(
    path: str | os.PathLike[str], *, warn: Warn | None = None
) -> Iterator[dict[str, Any]]:
    """Canonical rows one by one (exact path); a torn last line is skipped with a warning."""
    for _number, _line, row in numbered_rows(path, warn=warn):
        yield row


def numbered_rows(
    path: str | os.PathLike[str], *, warn: Warn | None = None, keep: bytes | None = None
) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """``(line number, line, canonical row)`` one by one, under the reader's rules: a BOM is
    skipped, a torn last line is skipped with a warning, a bad line is a ``file:line`` error.
    The file is read in pieces, so memory does not grow with it.

    ``keep``: only lines holding these bytes are parsed (a reader after one kind of row,
    such as judge rows, pays one scan for the rest)."""
    path = Path(path)
    end, torn = _inspect(path)
    number, rows = 0, 0
    try:
        for first, pos, view in read_batches(path, 0, end, _PIECE):
            data = bytes(view)
            if pos == 0:
                data = data.removeprefix(b"\xef\xbb\xbf")
            for number, line in enumerate(batch_lines(data), first):
                if not line.strip():
                    continue
                rows += 1
                if keep is None or keep in line:
                    yield number, line, parse_line(line, where=f"{path}:{number}", warn=warn)
    except NeedsExactPath:  # what read_batches says when the file shrank under it
        raise UserError(
            f"{path}: the file shrank while it was read", fix="read it again when no writer cuts it"
        ) from None
    if rows == 0:
        raise UserError(f"{path}: the ledger is empty", fix="run something that writes to it first")
    if torn and warn is not None:
        warn(_torn_message(path, number + 1, torn))


def resume_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """:func:`iter_rows` for a writer about to append (``run --resume``): no rows when the
    file is missing, empty, or holds only a torn line (the writer cuts that off first).
    Otherwise the main reader's rules exactly: a last line without a newline that parses is
    a row, a BOM is skipped, ``NaN`` reads as the summaries read it, aliases (``task``) fill
    the canonical names, and a bad line is a ``file:line`` error."""
    path = Path(path)
    try:
        if path.stat().st_size == 0:
            return iter(())
    except FileNotFoundError:
        return iter(())
    end, _ = _inspect_or_torn(path)
    if end == 0:
        return iter(())
    return iter_rows(path)


def _inspect_or_torn(path: Path) -> tuple[int, int]:
    """:func:`_inspect`, with (0, 0) for a file that holds only a torn line."""
    try:
        return _inspect(path)
    except OnlyTorn:
        return 0, 0


class OnlyTorn(UserError):
    """The ledger holds nothing but a torn line (a writer about to append cuts it off)."""


class Ledger:
    """A ledger in columns: :class:`Factor` for text, float64 arrays (NaN = unknown) for numbers.

    ``ledger["arm"]`` is a Factor, ``ledger["total_tokens"]`` an array; :meth:`rows` gives the
    canonical row dicts (re-read from the file on demand when the fast path was used).
    """

    def __init__(
        self,
        path: Path,
        columns: Columns,
        length: int,
        warnings: list[str],
        *,
        end_offset: int,
        rows: list[dict[str, Any]] | None = None,
        lines: np.ndarray | None = None,
    ) -> None:
        self.path = path
        self.warnings = warnings
        self.end_offset = end_offset  # bytes of the file this ledger covers
        self._columns = columns
        self._length = length
        self._rows = rows
        # Where each row came from: (file, first row) spans and line numbers (None: row + 1).
        self.sources: list[tuple[Path, int, int]] = [(path, 0, end_offset)]
        self._lines = lines
        self._keep: np.ndarray | None = None  # rows kept from the files (duplicates dropped)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, name: str) -> Any:
        try:
            return self._columns[name]
        except KeyError:
            raise KeyError(
                f"column {name!r} was not read (have: {', '.join(self._columns)})"
            ) from None

    def __contains__(self, name: str) -> bool:
        return name in self._columns

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self._columns)

    def factor(self, name: str) -> Factor:
        column = self[name]
        if not isinstance(column, Factor):
            raise TypeError(f"column {name!r} is numeric")
        return column

    def number(self, name: str) -> np.ndarray:
        column = self[name]
        if isinstance(column, Factor):
            raise TypeError(f"column {name!r} is text")
        return column

    def ok(self) -> np.ndarray:
        """Rows whose call succeeded."""
        return self.factor("status").mask("ok")

    def has_usage(self) -> np.ndarray:
        """Rows with a known total token count (server-reported or estimated)."""
        missing = self.factor("usage_source").mask("missing")
        return ~missing & ~np.isnan(self.number("total_tokens"))

    def rows(self) -> list[dict[str, Any]]:
        if self._rows is None:
            rows = []
            for path, _, end in self.sources:
                data = _read_bytes(path, end)
                rows += [parse_line(line, where=f"{path}:{n}") for n, line in _numbered_views(data)]
            if self._keep is not None:
                rows = [r for r, keep in zip(rows, self._keep.tolist(), strict=True) if keep]
            self._rows = rows
        return self._rows

    def load(self, name: str) -> Any:
        """Column ``name``, read from the files now if it was not read with the others.

        For checks that only rarely need a column: the summary reads fewer fields (faster) and
        fetches this one only when it matters. Reads exactly the bytes the ledger covers.
        """
        if name in self._columns:
            return self._columns[name]
        if self._rows is not None and self._keep is None:
            column = columns_from_rows(self._rows, (name,))[name]
        else:
            parts = [_column_of(path, end, name) for path, _, end in self.sources]
            column = concat(parts, (name,))[name]
            if self._keep is not None:
                column = (
                    Factor(column.codes[self._keep], column.levels)
                    if isinstance(column, Factor)
                    else column[self._keep]
                )
        self._columns[name] = column
        return column

    def where(self, index: int) -> str:
        """``file:line`` of row ``index`` (for warnings that point at the evidence)."""
        if self._keep is not None:
            index = int(np.flatnonzero(self._keep)[index])
        path, first = self.sources[0][:2]
        for source, start, _ in self.sources:
            if start <= index:
                path, first = source, start
        line = index - first + 1 if self._lines is None else int(self._lines[index])
        return f"{path}:{line}"

    def line_numbers(self) -> np.ndarray:
        """Line number of every row read from the files (before duplicates are dropped)."""
        if self._lines is not None:
            return self._lines
        return np.arange(1, self._length + 1, dtype=np.int64)


def read_ledger(
    path: str | os.PathLike[str],
    *,
    warn: Warn | None = None,
    columns: Sequence[str] | None = None,
    workers: int | None = None,
) -> Ledger:
    """Read a whole ledger into columns (``columns``: just these, faster; default all).

    Big files are decoded in ``workers`` processes (default: one per CPU, up to 4, for files
    over 48 MB when this process runs no other threads); each decodes a slice of whole lines.
    """
    path = Path(path)
    names = tuple(columns) if columns is not None else ALL_COLUMNS
    unknown = [n for n in names if n not in ALL_COLUMNS]
    if unknown:
        raise ValueError(f"unknown ledger columns: {unknown}")
    end, torn = _inspect(path)
    try:
        built, length = fast_columns(path, end, names, workers)
    except NeedsExactPath:
        built = None
    if built is not None:
        warnings = [_torn_message(path, length + 1, torn)] if torn else []
        ledger = Ledger(path, built, length, warnings, end_offset=end)
    else:
        data = _read_bytes(path, end)
        warnings = [_torn_message(path, data.count(b"\n") + 1, torn)] if torn else []
        rows = [
            parse_line(line, where=f"{path}:{n}", warn=warnings.append)
            for n, line in _numbered_views(data)
        ]
        if not rows:
            raise UserError(
                f"{path}: the ledger is empty (no rows)", fix="point at a ledger with rows"
            )
        built = columns_from_rows(rows, names)
        lines = np.fromiter((n for n, _ in _numbered_views(data)), dtype=np.int64)
        ledger = Ledger(path, built, len(rows), warnings, end_offset=end, rows=rows, lines=lines)
    for message in warnings:
        if warn is not None:
            warn(message)
    return ledger


def _column_of(path: Path, end: int, name: str) -> Columns:
    try:
        return fast_columns(path, end, (name,), 1)[0]
    except NeedsExactPath:
        data = _read_bytes(path, end)
        rows = [parse_line(line, where=f"{path}:{n}") for n, line in _numbered_views(data)]
        return columns_from_rows(rows, (name,))


def read_rows(rows: Iterable[dict[str, Any]], *, columns: Sequence[str] | None = None) -> Ledger:
    """A Ledger from canonical rows already in memory (e.g. gathered by a follower)."""
    rows = list(rows)
    names = tuple(columns) if columns is not None else ALL_COLUMNS
    built = columns_from_rows(rows, names)
    return Ledger(Path("<rows>"), built, len(rows), [], end_offset=0, rows=rows)


def _open(path: Path) -> Any:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise UserError(f"{path}: no such ledger file", fix="check the path") from None
    except IsADirectoryError:
        raise UserError(
            f"{path}: is a directory, not a ledger file", fix="name the .jsonl file"
        ) from None
    except PermissionError:
        raise UserError(f"{path}: permission denied", fix="check the file's permissions") from None


def _inspect(path: Path) -> tuple[int, int]:
    """(bytes to read, bytes of a torn last line to skip); errors for missing/empty files."""
    check_regular(path)  # a FIFO would block open(); gzip would fail as "not UTF-8"
    with _open(path) as fh:
        refuse_gzip(path, fh.read(2))  # (check_readable, without opening the file twice)
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            raise UserError(
                f"{path}: the ledger is empty", fix="run something that writes to it first"
            )
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return size, 0
        cut, pos = 0, size
        while pos > 0:
            start = max(0, pos - (1 << 16))
            fh.seek(start)
            found = fh.read(pos - start).rfind(b"\n")
            if found >= 0:
                cut = start + found + 1
                break
            pos = start
        fh.seek(cut)
        tail = fh.read(size - cut)
    if not tail.strip() or _parses(tail.removeprefix(b"\xef\xbb\xbf")):
        return size, 0
    if cut == 0 or not _read_bytes(path, cut).strip():
        raise OnlyTorn(
            f"{path}: the ledger holds only a torn line", fix="check the run that wrote it"
        )
    return cut, size - cut


def _torn_message(path: Path, line: int, torn: int) -> str:
    return (
        f"{path}:{line}: skipped a torn last line ({torn} bytes without a newline; "
        "a writer probably crashed mid-write)"
    )


def _read_bytes(path: Path, end: int) -> bytes:
    with _open(path) as fh:
        data = fh.read(end)
    return data.removeprefix(b"\xef\xbb\xbf")


def _load(path: Path) -> tuple[bytes, list[str]]:
    """The file's bytes minus a torn last line, and the warnings about it."""
    end, torn = _inspect(path)
    data = _read_bytes(path, end)
    if not data.strip():
        raise UserError(f"{path}: the ledger is empty", fix="run something that writes to it first")
    warnings = [_torn_message(path, data.count(b"\n") + 1, torn)] if torn else []
    return data, warnings


def _parses(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        if _depth_over(line, MAX_DEPTH):
            return False
        try:
            json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return False
    return True


def _numbered_views(data: bytes) -> Iterator[tuple[int, memoryview | bytes]]:
    """Like :func:`_numbered_lines`, but a line over :data:`LINE_BOUND` comes as a view into
    ``data`` (no copy of it is made; the lean decoder reads it in place)."""
    view = memoryview(data)
    number, pos, size = 0, 0, len(data)
    while pos < size:
        stop = data.find(b"\n", pos)
        stop = size if stop < 0 else stop
        number += 1
        if stop - pos > LINE_BOUND:
            yield number, view[pos:stop]
        else:
            line = data[pos:stop]
            if line.strip():
                yield number, line
        pos = stop + 1


def _numbered_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for every non-blank line, one at a time (``data.split`` would
    copy the whole file at once)."""
    number, pos, size = 0, 0, len(data)
    while pos < size:
        stop = data.find(b"\n", pos)
        stop = size if stop < 0 else stop
        number += 1
        line = data[pos:stop]
        if line.strip():
            yield number, line
        pos = stop + 1


__all__ = [
    "FACTOR_COLUMNS",
    "Factor",
    "Ledger",
    "iter_rows",
    "numbered_rows",
    "parse_line",
    "read_ledger",
    "read_rows",
    "resume_rows",
]
