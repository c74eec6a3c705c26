"""Which model answered, beside the model asked for: one warning for the run, ``tokens`` and ``elo``.

Why: a gateway can answer with another model than the one asked for under HTTP 200 (a LiteLLM
fallback, claude-code-router's default route). Rows record it as ``model_answered``
(:func:`eloledger.gateway.wire.answered_model`); without a warning an Elo table would compare the wrong
models without a word. Only rows that name an answering model count: older ledgers and gateways
that say nothing give no warning.

The file scan looks for the field's name in the raw bytes first (``bytes.find`` over 4 MB
chunks) and parses only the lines that hold it, so a ledger without the field costs one read.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eloledger.gateway.wire import same_model
from eloledger.ledger.linegrep import SAMPLE_ROLES, scan_lines
from eloledger.ledger.row import AnyRow
from eloledger.words import plural

FIELD = "model_answered"
NEEDLE = b'"model_answered"'  # a line that names the field holds these bytes


class Answered:
    """Counts ok calls per model asked for, and those another model answered."""

    def __init__(self) -> None:
        self.pairs: Counter[tuple[str, str]] = Counter()  # (asked, answered) -> ok calls
        self.calls: Counter[str] = Counter()  # asked -> ok calls that named who answered
        self.first: dict[tuple[str, str], str] = {}  # (asked, answered) -> file:line

    def record(self, row: AnyRow, where: str = "") -> None:
        asked, answered = row.get("model"), row.get(FIELD)
        if row.get("status", "ok") != "ok" or not isinstance(asked, str):
            return
        if not isinstance(answered, str) or not answered:
            return
        self.calls[asked] += 1
        if not same_model(asked, answered):
            self.pairs[(asked, answered)] += 1
            if where:
                self.first.setdefault((asked, answered), where)

    def warnings(self) -> list[str]:
        """One line per model asked for that another model answered."""
        out = []
        for asked in sorted({a for a, _ in self.pairs}):
            others = [(b, n) for (a, b), n in self.pairs.most_common() if a == asked]
            named = ", ".join(f"{b} ({plural(n, 'call')})" for b, n in others)
            first = self.first.get((asked, others[0][0]))
            at = f", first at {first}" if first else ""
            out.append(
                f"model {asked!r} was asked for but {sum(n for _, n in others)} of "
                f"{plural(self.calls[asked], 'ok call')} were answered by another model: "
                f"{named}{at} (model_answered in the ledger: a gateway fallback or default "
                f"route), so those results are not {asked!r}'s; fix: remove the fallback or "
                "route on the gateway, or ask for the model it serves"
            )
        return out


def scan_files(paths: Iterable[str | os.PathLike[str]]) -> Answered:
    """The answered-model counts of ledger files (sample rows only; judge rows left out)."""
    seen = Answered()
    for path in paths:
        scan_lines(Path(path), (NEEDLE,), lambda row, where: _sample_row(row, where, seen))
    return seen


def _sample_row(row: dict[str, Any], where: str, seen: Answered) -> None:
    if row.get("role") in SAMPLE_ROLES:
        seen.record(row, where)


def file_warnings(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """:meth:`Answered.warnings` for ledger files; unreadable files say nothing here (the
    reader that reads them reports them)."""
    try:
        return scan_files(paths).warnings()
    except OSError:
        return []


def ledger_warnings(ledgers: Any) -> list[str]:
    """:func:`file_warnings` and the zero-usage warning for what a command's ``--ledger``
    names (files, globs, folders): what ``elo --ledger`` adds to its own warnings."""
    from eloledger.ledger.merge import _as_list
    from eloledger.ledger.sources import expand_ledgers
    from eloledger.ledger.zero_usage import zero_usage_warnings

    try:
        paths = expand_ledgers(_as_list(ledgers))
    except Exception:  # noqa: BLE001 - the reader that reads them names the problem
        return []
    return [*file_warnings(paths), *zero_usage_warnings(paths)]
