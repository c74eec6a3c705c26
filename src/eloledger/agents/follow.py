"""Follow agent session logs live (``watch --claude-code``): new files appear, existing grow.

The same scanner as ``import`` (offsets, torn lines, held calls, the key index) kept in memory:
nothing is written. Each poll lists the log folders again, so sessions started after the watch
began are picked up.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eloledger.agents.importer import find_logs, log_format
from eloledger.agents.logscan import LogScanner
from eloledger.ledger.row import LedgerRow

SETTLE_S = 2.0  # a live view may show a call 2 s after its last line was written
RELIST_S = 2.0  # how often the log folders are listed again for new session files


class AgentLogFollower:
    """``poll()`` returns ledger rows for the model calls logged since the last poll."""

    def __init__(
        self,
        kind: str,
        roots: Sequence[Path],
        *,
        from_start: bool = True,
        settle_s: float = SETTLE_S,
    ) -> None:
        self.kind = kind
        self.roots = [Path(r) for r in roots]
        self._rows: list[LedgerRow] = []
        self.scanner = LogScanner(log_format(kind), emit=self._rows.append, settle_s=settle_s)
        self._skip_existing = not from_start
        self._files: list[Path] = []
        self._listed_at = float("-inf")

    def files(self) -> list[Path]:
        """The log files, listed again at most every RELIST_S seconds (a folder walk is slow)."""
        now = time.monotonic()
        if now - self._listed_at >= RELIST_S:
            self._files = find_logs(self.kind, [r for r in self.roots if r.exists()])
            self._listed_at = now
        return self._files

    def poll(self) -> list[LedgerRow]:
        self.scanner.scan(self.files())
        rows, self._rows[:] = list(self._rows), []
        if self._skip_existing:  # --from-end: what was logged before the watch is only indexed
            self._skip_existing = False
            return []
        return rows

    @property
    def report(self) -> Any:
        return self.scanner.report
