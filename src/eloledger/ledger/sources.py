"""Which files a ledger argument names, and whether they can be read or written safely.

A ledger argument may be a file, a glob (``runs/shard-*.jsonl``) or a directory (its ``*.jsonl``
ledgers, leaving out the comparisons and results files a run writes beside its ledger). Every
file is checked before it is opened: a FIFO or a device would block a reader forever, a gzip
file would fail as "not UTF-8" deep inside the parser, a directory would raise
``IsADirectoryError``. Each becomes a one-line :class:`UserError` at once.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from eloledger.errors import UserError

GZIP_MAGIC = b"\x1f\x8b"
# Files a run writes beside its ledger that are not ledgers (see runner/run.py, judges/compare).
_NOT_LEDGERS = (".comparisons.jsonl", ".results.jsonl", "comparisons.jsonl", "results.jsonl")
_GLOB_CHARS = frozenset("*?[")


def expand_ledgers(args: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Ledger files named by ``args`` (files, globs, directories), in order, each once.

    Raises :class:`UserError` for a name that matches nothing, a directory without ledgers,
    or a file that is not a regular, uncompressed file.
    """
    out: list[Path] = []
    seen: set[str] = set()  # resolved: the same file named twice is read once
    for arg in args:
        for path, resolved in _expand_one(str(arg)):
            check_readable(path)
            resolved = resolved or str(path.resolve())
            if resolved not in seen:
                seen.add(resolved)
                out.append(path)
    if not out:
        raise UserError("no ledger given", fix="name a .jsonl ledger, a glob or a folder")
    return out


def _expand_one(arg: str) -> list[tuple[Path, str | None]]:
    """The files ``arg`` names, each with its resolved path when that came for free."""
    path = Path(arg)
    if path.is_dir():
        found = _folder_ledgers(path)
        if not found:
            raise UserError(
                f"{path}: folder holds no .jsonl ledger",
                fix="name the ledger file, or a folder that holds ledgers",
            )
        return found
    if _GLOB_CHARS & set(arg) and not path.exists():
        matched = sorted(Path(p) for p in glob.glob(arg) if not _is_side_file(Path(p)))
        if not matched:
            raise UserError(f"{arg}: no file matches this pattern", fix="check the pattern")
        return [(p, None) for p in ([p for p in matched if not p.is_dir()] or matched)]
    return [(path, None)]


def _folder_ledgers(folder: Path) -> list[tuple[Path, str | None]]:
    """A folder's ``*.jsonl`` files (as ``Path.glob`` matches them) but the side files, in
    order. One listing tells each entry's kind, so a folder of 8,000 small ledgers costs no
    ``stat`` and no resolving per file: a file that is no symlink resolves to its name in
    the resolved folder (listing and resolving them took 0.20 s; now 0.03)."""
    resolved = str(folder.resolve())
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            name, key = entry.name, os.path.normcase(entry.name)  # (fnmatch's "*.jsonl")
            if not key.endswith(".jsonl") or name.endswith(_NOT_LEDGERS):
                continue
            if entry.is_file():  # (follows a symlink, as Path.is_file does)
                real = None if entry.is_symlink() else os.path.join(resolved, name)
                found.append((key, name, real))
    found.sort()  # (one folder's paths sort as their names do)
    return [(folder / name, real) for _, name, real in found]


def _is_side_file(path: Path) -> bool:
    return path.name.endswith(_NOT_LEDGERS)


def check_readable(path: Path) -> None:
    """A regular, non-empty-named, uncompressed file: else a UserError naming the fix.

    ``stat`` first, so a FIFO is refused before ``open`` could block on it.
    """
    check_regular(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
    except PermissionError:
        raise UserError(f"{path}: permission denied", fix="check the file's permissions") from None
    refuse_gzip(path, head)


def check_regular(path: Path) -> None:
    """:func:`check_readable` without opening the file: a regular file, by ``stat``."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UserError(f"{path}: no such ledger file", fix="check the path") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})", fix="check the path") from None
    if stat.S_ISDIR(mode):
        raise UserError(f"{path}: is a directory, not a ledger file", fix="name the .jsonl file")
    if not stat.S_ISREG(mode):
        raise UserError(
            f"{path}: is a {_kind(mode)}, not a regular ledger file (reading it could block "
            "forever)",
            fix="copy the ledger to a file first, e.g. cat PIPE > ledger.jsonl",
        )


def refuse_gzip(path: Path, head: bytes) -> None:
    """A UserError when the file's first bytes ``head`` are gzip's."""
    if head[:2] == GZIP_MAGIC:
        raise UserError(
            f"{path}: gzip is not supported for ledgers",
            fix=f"gunzip it first: gunzip -k {path}",
        )


def check_writable(path: Path) -> None:
    """A path the ledger writer may open: a regular file, a new file or a character device.

    Directories and FIFOs are refused (a FIFO would block ``open`` until someone reads it).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"{path}: cannot use as ledger ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise UserError(
            f"{path}: is a directory, not a ledger file",
            fix=f"give a file path, e.g. --ledger {path / 'ledger.jsonl'}",
        )
    if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
        raise UserError(
            f"{path}: is a {_kind(mode)}, not a regular file",
            fix="give a regular .jsonl file path with --ledger",
        )


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"
