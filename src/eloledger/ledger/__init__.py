"""The token ledger: one JSON object per model call, append-only (schema in design.md)."""

from eloledger.ledger.schema import FIELDS, SCHEMA_VERSION
from eloledger.ledger.writer import LedgerWriter

__all__ = ["FIELDS", "SCHEMA_VERSION", "LedgerWriter"]
