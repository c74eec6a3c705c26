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


def fairness_record(
    path: str | os.PathLike[str], arms: dict[str, str], **options: Any
) -> dict[str, Any]:
    """The fairness verdict of a ledger file, as ``eloledger fairness`` and the TUI give it.

    One function for both faces, so the same ledger, arms and options give the same record
    (the dialog once used its own rounds and read the file its own way; issue 11 item 16).
    ``arms`` maps the roles old_1, new_1, old_n, new_n to arm names; ``options`` are
    :func:`eloledger.rating.fairness.fairness_verdict`'s (bootstrap, seed, thresholds).
    """
    import datetime as dt

    from eloledger.rating.fairness import fairness_verdict

    rows, warnings = load_rows(path)
    record = fairness_verdict(
        rows, arms["old_1"], arms["new_1"], arms["old_n"], arms["new_n"], **options
    )
    record["ledger"] = {**ledger_fingerprint(path), "rows": len(rows)}
    record["created_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record["warnings"][:0] = warnings
    return record
