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
    from eloledger.rating.outcomes import PASS_THRESHOLD, ledger_results

    rows, warnings = load_rows(path)
    results = ledger_results(path, options.get("pass_threshold", PASS_THRESHOLD))
    record = fairness_verdict(
        rows, arms["old_1"], arms["new_1"], arms["old_n"], arms["new_n"], results=results,
        **options,
    )  # fmt: skip
    record["ledger"] = {**ledger_fingerprint(path), "rows": len(rows)}
    record["created_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record["warnings"][:0] = warnings
    return record
