"""Read one or several ledgers (files, globs, folders) as one, each call counted once.

Shards of one run (``run --shard I/N``), a ledger and its copy, or ``cat L L`` all merge here.
Duplicate detection costs a line-by-line pass, so it only runs when it can find something:
always for several files, and for one file only when two rows share a timestamp (the writer
stamps each row, so a repeated row repeats its ``ts``) or rows have no timestamp at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from eloledger.ledger.columns import ALL_COLUMNS, Factor, concat
from eloledger.ledger.dedupe import DuplicateFinder, duplicate_message, find_duplicates
from eloledger.ledger.reader import (
    Ledger,
    _load,
    _numbered_lines,
    _read_bytes,
    parse_line,
    read_ledger,
)
from eloledger.ledger.sources import expand_ledgers

Warn = Callable[[str], None]
LedgerArgs = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def read_ledgers(
    args: LedgerArgs,
    *,
    columns: Sequence[str] | None = None,
    warn: Warn | None = None,
    workers: int | None = None,
) -> Ledger:
    """Every ledger ``args`` names, merged into one :class:`Ledger`, duplicates counted once."""
    paths = expand_ledgers(_as_list(args))
    names = tuple(columns) if columns is not None else ALL_COLUMNS
    want = names if "ts" in names else (*names, "ts")
    parts = [read_ledger(p, columns=want, workers=workers) for p in paths]
    ledger = parts[0] if len(parts) == 1 else _merge(parts, want)
    if len(parts) > 1 or _may_repeat(ledger.number("ts")):
        keep, pairs = _find_duplicates(parts)
        if pairs:
            ledger = _take(ledger, keep)
            ledger.warnings.append(duplicate_message(pairs))
    for message in ledger.warnings:
        if warn is not None:
            warn(message)
    return ledger


def read_rows_many(args: LedgerArgs) -> tuple[list[dict[str, Any]], list[str]]:
    """Canonical row dicts of every ledger ``args`` names, duplicates dropped, and warnings."""
    warnings: list[str] = []
    finder = DuplicateFinder()
    rows: list[dict[str, Any]] = []
    for path in expand_ledgers(_as_list(args)):
        for where, line, row in _lines_of(path, warnings.append):
            if finder.repeats(where, line, row, str(path)) is None:
                rows.append(row)
    if finder.pairs:
        warnings.append(duplicate_message(finder.pairs))
    return rows, warnings


def _as_list(args: LedgerArgs) -> list[str | os.PathLike[str]]:
    if isinstance(args, (str, os.PathLike)):
        return [args]
    return list(args)


def _may_repeat(ts: np.ndarray) -> bool:
    """Could two rows be the same call? Not when every row has its own timestamp."""
    if np.isnan(ts).any():
        return True
    steps = np.diff(ts)
    if (steps > 0).all():
        return False  # the usual ledger: stamped in writing order (a cheap check)
    return len(np.unique(ts)) < len(ts)


def _merge(parts: list[Ledger], names: Sequence[str]) -> Ledger:
    columns = concat([{n: p[n] for n in names} for p in parts], names)
    lines = np.concatenate([p.line_numbers() for p in parts])
    length = sum(len(p) for p in parts)
    warnings = [w for p in parts for w in p.warnings]
    merged = Ledger(parts[0].path, columns, length, warnings, end_offset=0, lines=lines)
    merged.sources = []
    start = 0
    for part in parts:
        merged.sources.append((part.path, start, part.end_offset))
        start += len(part)
    return merged


def _find_duplicates(parts: list[Ledger]) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """A keep-mask over the merged rows (in the readers' order) and the duplicate pairs.

    In bulk (line hashes confirmed byte for byte, identities from fields msgspec decodes); a
    ledger the bulk path cannot vouch for is checked line by line with the same rules.
    """
    data = [(str(part.path), _read_bytes(part.path, part.end_offset)) for part in parts]
    found = find_duplicates(data)
    if found is not None:
        return found
    return _find_duplicates_by_line(data)


def _find_duplicates_by_line(
    data: list[tuple[str, bytes]],
) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """The line-by-line check: every row through :class:`DuplicateFinder`."""
    finder = DuplicateFinder()
    keep: list[bool] = []
    for source, lines in data:
        for number, line in _numbered_lines(lines):
            where = f"{source}:{number}"
            row = _loads(line, where)
            keep.append(finder.repeats(where, line, row, source) is None)
    return np.array(keep, dtype=bool), finder.pairs


def _lines_of(path: Path, warn: Warn) -> Iterator[tuple[str, bytes, dict[str, Any]]]:
    """(file:line, line, canonical row) of one ledger, the reader's way (torn tail skipped)."""
    data, warnings = _load(path)
    for message in warnings:
        warn(message)
    for number, line in _numbered_lines(data):
        where = f"{path}:{number}"
        yield where, line, parse_line(line, where=where)


def _loads(line: bytes, where: str) -> dict[str, Any]:
    """Just enough of a row for its identity (the columns were already validated)."""
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return parse_line(line, where=where)
    return row if isinstance(row, dict) else {}


def _take(ledger: Ledger, keep: np.ndarray) -> Ledger:
    """The ledger without the rows ``keep`` drops (factor levels stay; empty groups vanish)."""
    columns = {}
    for name in ledger.columns:
        column = ledger[name]
        if isinstance(column, Factor):
            columns[name] = Factor(column.codes[keep], column.levels)
        else:
            columns[name] = column[keep]
    rows = ledger._rows
    out = Ledger(
        ledger.path,
        columns,
        int(keep.sum()),
        list(ledger.warnings),
        end_offset=ledger.end_offset,
        lines=ledger.line_numbers(),
    )
    out.sources = ledger.sources
    out._keep = keep
    if rows is not None:
        out._rows = [r for r, k in zip(rows, keep.tolist(), strict=True) if k]
    return out


__all__ = ["read_ledgers", "read_rows_many"]
