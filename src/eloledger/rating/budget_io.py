"""Load a ledger's canonical rows for budget curves and fairness, with its fingerprint."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any


def load_rows(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Canonical rows of a ledger and the reader's warnings (a torn last line, ...)."""
    from eloledger.ledger.reader import iter_rows

    warnings: list[str] = []
    rows = list(iter_rows(path, warn=warnings.append))
    return rows, warnings


def ledger_fingerprint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Path, size and SHA-256 of the ledger file, so an archived verdict names its input."""
    path = Path(path)
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return {"path": str(path), "bytes": size, "sha256": digest.hexdigest()}
