"""The token ledger: one JSON object per model call, append-only (fields in ``schema.py``;
the format and its guarantees in docs/ledger.md).

Modules: ``writer`` (LedgerWriter), ``reader`` (read_ledger, iter_rows, numbered_rows,
parse_line, Ledger), ``tally`` (TokenTally: what ``tokens`` prints, folded batch by batch),
``summary`` (its rules), ``follow`` (LedgerFollower), ``canonical`` (what a row from the wild
means). Import the reader-side modules directly; this
package only exposes the writer so that writing a ledger does not load numpy or msgspec.
"""

from eloledger.ledger.schema import FIELDS, SCHEMA_VERSION
from eloledger.ledger.writer import LedgerWriter

__all__ = ["FIELDS", "SCHEMA_VERSION", "LedgerWriter"]
