"""The Elo tab's data: one fitted report and how its rows sort.

The fit is the CLI's own: ``compute_elo`` calls the same ``report.elo_files`` function as
``eloledger elo COMPARISONS --ledger LEDGER`` (or, after a run, as ``eloledger run``), so the
tab's intervals (the task-clustered sandwich), anchor and columns are the command's, never a
second recipe. The columns, their titles, digits and narrow-screen order are
``report.elo_columns``'s, shared with the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.errors import warning_code
from eloledger.report.elo_columns import EloColumn, elo_columns

DEFAULT_THRESHOLD = 50.0  # Elo per 1K tokens per task


@dataclass
class EloData:
    """One fitted table plus where it came from."""

    players: list[dict[str, Any]]
    anchor: str
    has_costs: bool
    warnings: list[str] = field(default_factory=list)
    source: str = ""
    report: Any = None
    ledger: Path | None = None
    comparisons: Path | None = None

    def columns(self) -> tuple[EloColumn, ...]:
        """The table's columns: ``eloledger elo``'s for this report (the knee and worth-it are
        the rows' styles here, so no worth-it column, as without ``--threshold``)."""
        return elo_columns(self.report)


def compute_elo(comparisons: Path, ledger: Path | None, spec: Any = None) -> EloData:
    """The same call as ``eloledger elo COMPARISONS [--ledger LEDGER]`` with its defaults (runs
    in a thread): same fit, sandwich intervals, costs, latency and warnings. With the ``spec``
    of the run that wrote the files, the anchor is the run's, as ``eloledger run`` sets it."""
    from eloledger.report.elo_files import elo_of_files, elo_of_run

    ledger_arg = str(ledger) if ledger is not None else None
    if spec is not None:
        report = elo_of_run(str(comparisons), ledger_arg, spec)
    else:
        report = elo_of_files(str(comparisons), ledger_arg)
    source = comparisons.name + (f" + {ledger.name}" if ledger else "")
    return EloData(
        list(report.players),
        report.anchor,
        report.has_costs,
        list(report.warnings),
        source,
        report,
        ledger,
        comparisons,
    )


# Warnings that stay on screen, not only in a toast: estimated tokens, unsandboxed scores.
LOUD_WARNINGS = frozenset({"usage.estimated", "judge.unsandboxed"})


def loud_warnings(warnings: Sequence[str]) -> str:
    """The report's warnings that tokens are estimates or scores unsandboxed: they stay on
    screen, not just in a toast."""
    loud = [f"⚠ {w}" for w in warnings if warning_code(w) in LOUD_WARNINGS]
    return "\n".join(loud)


def sort_value(record: dict[str, Any], key: str) -> tuple[int, Any]:
    """Missing values sort last whatever the direction."""
    value = record.get(key)
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return (1, 0)
    return (0, value if not isinstance(value, str) else value.lower())


def sorted_players(players: Sequence[dict[str, Any]], key: str, reverse: bool) -> list[dict]:
    """The players by the record key ``key`` (a column's ``sort_by``; missing values last
    either way): the table's and the Markdown export's order."""
    present = [p for p in players if sort_value(p, key)[0] == 0]
    missing = [p for p in players if sort_value(p, key)[0] == 1]
    present.sort(key=lambda p: sort_value(p, key)[1], reverse=reverse)
    return present + missing


def finite(value: Any) -> bool:
    """A real number (not a bool, not NaN/inf)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
