"""Load ledgers' canonical rows for budget curves and fairness, with their fingerprints."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LedgerArgs = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def load_rows(ledgers: LedgerArgs) -> tuple[list[dict[str, Any]], list[str]]:
    """Canonical rows of one or several ledgers (files, globs, folders) and the reader's
    warnings (a torn last line, a call recorded twice and counted once, ...)."""
    from eloledger.ledger.merge import read_rows_many

    return read_rows_many(ledgers)


def ledger_fingerprint(ledgers: LedgerArgs) -> dict[str, Any]:
    """Path, size and SHA-256 of the ledger file, so an archived verdict names its input.

    Several ledgers: ``{"files": [one fingerprint per file]}``.
    """
    from eloledger.ledger.sources import expand_ledgers

    single = isinstance(ledgers, (str, os.PathLike))
    paths = expand_ledgers([ledgers] if single else list(ledgers))  # type: ignore[list-item]
    prints = [_fingerprint(p) for p in paths]
    return prints[0] if len(prints) == 1 else {"files": prints}


def _fingerprint(path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return {"path": str(path), "bytes": size, "sha256": digest.hexdigest()}
