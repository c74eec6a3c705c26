"""What runs were made and where they are heading: the run index and the direction audit.

``index`` writes and reads the run index (one line per run); ``audit`` reads it per week or
per run and flags cost drift. Both are views over files the runner and the rating wrote.
"""

from eloledger.history.audit import AUDIT_COLUMNS, DRIFT_PASS, DRIFT_TOKENS, audit, audit_rows
from eloledger.history.index import (
    HISTORY_COLUMNS,
    append_entry,
    comparisons_beside,
    gate_lines,
    history_rows,
    index_path,
    index_run,
    read_index,
    record_run,
    run_entry,
    verdict_lines,
)

__all__ = [
    "AUDIT_COLUMNS",
    "DRIFT_PASS",
    "DRIFT_TOKENS",
    "HISTORY_COLUMNS",
    "append_entry",
    "audit",
    "audit_rows",
    "comparisons_beside",
    "gate_lines",
    "history_rows",
    "index_path",
    "index_run",
    "read_index",
    "record_run",
    "run_entry",
    "verdict_lines",
]
