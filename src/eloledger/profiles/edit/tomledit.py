"""Edit TOML with tomlkit, which keeps comments, inline comments, order and formatting.

Keys are dotted paths of table names; a value that is a dict replaces (or creates) a whole
table, which is how we own ``[model_providers.<id>]``.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.items import InlineTable, Table

from eloledger.errors import UserError
from eloledger.fsutil import refuse_bom
from eloledger.profiles.edit import DELETE, MISSING, KeyPath, get


def parse_doc(text: str, path: Path | str) -> tomlkit.TOMLDocument:
    refuse_bom(text, Path(path))
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise UserError(
            f"{path}:{exc.line}: not valid TOML: {str(exc).split(' at line')[0]} (line "
            f"{exc.line}, column {exc.col}); nothing was written",
            fix="repair the file (or restore it from its backup) and try again",
        ) from None


def parse(text: str, path: Path | str) -> dict[str, Any]:
    return parse_doc(text, path).unwrap()


def apply(text: str, changes: dict[KeyPath, Any], path: Path | str) -> str:
    """Apply ``{keypath: value | DELETE}``; a dict value is a whole ``[table]``.

    A new table is spliced in as text where a person would put it (after the last table of
    the same family, e.g. the other ``[model_providers.*]``, else at the end, one blank line
    before it), never between a user's comment and the table it introduces; removing one
    takes out exactly those lines again, so a switch there and back gives the same bytes.
    """
    for keypath, value in changes.items():
        text = _apply_one(text, keypath, value, path)
    return text


def _apply_one(text: str, keypath: KeyPath, value: Any, path: Path | str) -> str:
    doc = parse_doc(text, path)
    data = doc.unwrap()
    current = get(data, keypath)
    if value is DELETE:
        if current is MISSING:
            return text
        if isinstance(current, dict) and len(keypath) > 1:
            spliced = _remove_table_text(text, keypath)
            if spliced is not None and _same(spliced, _without(data, keypath, text)):
                return spliced
        parent = _container(doc, keypath[:-1], path, create=False)
        del parent[keypath[-1]]
        return tomlkit.dumps(doc)
    if current == value:
        return text
    if isinstance(value, dict) and len(keypath) > 1:
        if isinstance(current, dict):  # ours already: change its keys where they stand
            table = _container(doc, keypath, path, create=False)
            for k in [k for k in table if k not in value]:
                del table[k]
            for k, v in value.items():
                if table.get(k) != v:
                    table[k] = _item(v)
            return tomlkit.dumps(doc)
        if current is MISSING:
            spliced = _insert_table_text(text, keypath, value)
            if _same(spliced, _with(data, keypath, value)):
                return spliced
    parent = _container(doc, keypath[:-1], path, create=True)
    if isinstance(value, dict) and isinstance(parent, InlineTable):
        parent[keypath[-1]] = _item(value)  # model_providers = { azure = {…}, ours = {…} }
    elif isinstance(value, dict):
        table = tomlkit.table()
        for k, v in value.items():
            table[k] = _item(v)
        if keypath[-1] in parent:
            del parent[keypath[-1]]
        parent[keypath[-1]] = table
    elif keypath[-1] in parent:
        parent[keypath[-1]] = value
    else:
        _add_scalar(doc, parent, keypath[-1], value)
    return tomlkit.dumps(doc)


def _item(value: Any) -> Any:
    """Nested dicts as inline tables (``query_params = { api-version = "…" }``), as Codex's
    documentation writes them, not as separate ``[a.b.c]`` tables."""
    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        inline.update({k: _item(v) for k, v in value.items()})
        return inline
    return value


def _same(text: str, expected: dict[str, Any]) -> bool:
    """The splice parses and says exactly what the structured edit would have."""
    try:
        return bool(tomlkit.parse(text).unwrap() == expected)
    except ParseError:
        return False


def _with(data: dict[str, Any], keypath: KeyPath, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    for key in keypath[:-1]:
        node = node.setdefault(key, {})
    node[keypath[-1]] = value
    return out


def _without(data: dict[str, Any], keypath: KeyPath, text: str) -> dict[str, Any]:
    """``data`` less ``keypath``; a parent left empty goes too unless it has its own header."""
    out = copy.deepcopy(data)
    del get(out, keypath[:-1])[keypath[-1]]
    headers = {path for path, _, _ in _tables(text.splitlines(keepends=True))}
    for depth in range(len(keypath) - 1, 0, -1):
        parent = keypath[:depth]
        if get(out, parent) == {} and parent not in headers:
            del get(out, parent[:-1])[parent[-1]]
    return out


_HEADER = re.compile(r"^[ \t]*\[(?!\[)[^\n]*$|^[ \t]*\[\[[^\n]*$")


def _header_path(line: str) -> KeyPath | None:
    """The key path of a ``[a.b]`` header line (None for ``[[a]]`` or a non-header)."""
    stripped = line.strip()
    if not stripped.startswith("[") or stripped.startswith("[["):
        return None
    try:
        node: Any = tomlkit.parse(stripped).unwrap()
    except ParseError:
        return None
    keys: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        keys.append(key)
        node = node[key]
    return tuple(keys)


def _tables(lines: list[str]) -> list[tuple[KeyPath | None, int, int]]:
    """(path, first line, one past the last content line) of every table header.

    A table's trailing blank and comment lines belong to whatever follows: they are usually
    the user's note about the next table.
    """
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line.rstrip("\r\n"))]
    out = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while end > start + 1 and (
            not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")
        ):
            end -= 1
        out.append((_header_path(lines[start]), start, end))
    return out


def _insert_table_text(text: str, keypath: KeyPath, value: dict[str, Any]) -> str:
    nl = "\r\n" if "\r\n" in text else "\n"
    doc = tomlkit.document()
    node: Any = doc
    for key in keypath[:-1]:
        node[key] = tomlkit.table(is_super_table=True)
        node = node[key]
    table = tomlkit.table()
    for k, v in value.items():
        table[k] = _item(v)
    node[keypath[-1]] = table
    block = tomlkit.dumps(doc).replace("\n", nl)
    lines = text.splitlines(keepends=True)
    parent = keypath[:-1]  # its own header, its tables and their sub-tables: one family
    family = [end for path, _, end in _tables(lines) if path and path[: len(parent)] == parent]
    if family:
        at = family[-1]
        return "".join(lines[:at]) + nl + block + "".join(lines[at:])
    if not text.strip():
        return block
    if not text.endswith(("\n", "\r")):
        text += nl
    return text + ("" if text.endswith(nl + nl) else nl) + block


def _remove_table_text(text: str, keypath: KeyPath) -> str | None:
    lines = text.splitlines(keepends=True)
    spans = [(s, e) for path, s, e in _tables(lines) if path == keypath]
    if len(spans) != 1:
        return None
    start, end = spans[0]
    if any(
        path and path[: len(keypath)] == keypath and s != start for path, s, _ in _tables(lines)
    ):
        return None  # sub-tables [a.b.c] of it elsewhere: leave it to tomlkit
    if start > 0 and not lines[start - 1].strip():
        start -= 1  # the blank line that separated it
    return "".join(lines[:start] + lines[end:])


def _add_scalar(doc: tomlkit.TOMLDocument, parent: Any, key: str, value: Any) -> None:
    """Put a new top-level scalar before the first table, where TOML requires it."""
    if parent is doc:
        body = doc.body
        first_table = next(
            (i for i, (k, item) in enumerate(body) if k is not None and isinstance(item, Table)),
            None,
        )
        if first_table is not None:
            # right after the last top-level key, so the new line sits with its peers
            last_key = max(
                (i for i, (k, _) in enumerate(body[:first_table]) if k is not None), default=-1
            )
            doc._insert_at(last_key + 1 if last_key >= 0 else first_table, key, value)  # noqa: SLF001
            return
    parent[key] = value


def _container(doc: Any, keypath: KeyPath, path: Path | str, *, create: bool) -> Any:
    node = doc
    for i, key in enumerate(keypath):
        if key not in node:
            if not create:
                return node
            node[key] = tomlkit.table(is_super_table=True)
        node = node[key]
        if not isinstance(node, dict):
            dotted = ".".join(keypath[: i + 1])
            raise UserError(
                f"{path}: '{dotted}' is not a table; nothing was written",
                fix=f"make '{dotted}' a table or remove it",
            )
    return node
