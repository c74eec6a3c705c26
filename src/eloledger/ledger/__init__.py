"""The token ledger: one JSON object per model call, append-only (fields in ``row.py``, what
they mean in ``schema.py``; the format and its guarantees in docs/ledger.md).

Modules: ``row`` (LedgerRow: the one row contract every writer builds), ``writer``
(LedgerWriter), ``reader`` (read_ledger, iter_rows, numbered_rows, parse_line, Ledger),
``tally`` (TokenTally: what ``tokens`` prints, folded batch by batch), ``summary`` (its rules),
``follow`` (LedgerFollower), ``canonical`` (what a row from the wild means). Import the
reader-side modules directly; this package only exposes the writer and its row, so that
writing a ledger does not load numpy.
"""

from eloledger.ledger.row import LedgerRow
from eloledger.ledger.schema import FIELDS, SCHEMA_VERSION
from eloledger.ledger.writer import LedgerWriter

__all__ = ["FIELDS", "SCHEMA_VERSION", "LedgerRow", "LedgerWriter"]
