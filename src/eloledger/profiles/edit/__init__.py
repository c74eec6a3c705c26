"""Byte-preserving editors for the file formats the coding CLIs use (JSON, TOML, .env).

Each editor changes only the keys it is told to change and leaves every other byte of the
file as it was: that is the promise users of other switchers lost their hooks over.
"""

from __future__ import annotations

from typing import Any

DELETE = object()  # a change value meaning "remove this key"
MISSING = object()  # what ``get`` returns for an absent key

KeyPath = tuple[str, ...]


def get(data: Any, keypath: KeyPath) -> Any:
    """The value at ``keypath`` in parsed JSON or TOML data, or :data:`MISSING`."""
    node = data
    for key in keypath:
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = node[key]
    return node
