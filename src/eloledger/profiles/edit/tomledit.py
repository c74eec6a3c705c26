"""Edit TOML with tomlkit, which keeps comments, inline comments, order and formatting.

Keys are dotted paths of table names; a value that is a dict replaces (or creates) a whole
table, which is how we own ``[model_providers.<id>]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.items import Table

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
    doc = parse_doc(text, path)
    for keypath, value in changes.items():
        current = get(doc.unwrap(), keypath)
        if value is DELETE:
            if current is not MISSING:
                parent = _container(doc, keypath[:-1], path, create=False)
                del parent[keypath[-1]]
            continue
        if current == value:
            continue
        parent = _container(doc, keypath[:-1], path, create=True)
        if isinstance(value, dict):
            table = tomlkit.table()
            for k, v in value.items():
                table[k] = v
            table.add(tomlkit.nl())  # a blank line before whatever table follows
            if keypath[-1] in parent:
                del parent[keypath[-1]]
            parent[keypath[-1]] = table
        elif keypath[-1] in parent:
            parent[keypath[-1]] = value
        else:
            _add_scalar(doc, parent, keypath[-1], value)
    return tomlkit.dumps(doc)


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
