"""The Elo tab's data: one fitted report, its columns and how a cell reads.

The fit is the CLI's own: ``compute_elo`` builds the arguments ``eloledger elo COMPARISONS
--ledger LEDGER`` parses and calls the same ``cli.elo_cmd.compute``, so the tab's intervals
(the task-clustered sandwich) and columns are the command's, never a second recipe.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.errors import warning_code
from eloledger.textsafe import visible

DEFAULT_THRESHOLD = 50.0  # Elo per 1K tokens per task

# (record key, title, digits): the same columns as `eloledger elo --ledger`.
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("name", "arm", None),
    ("elo", "Elo", 0),
    ("ci", "95% CI", None),
    ("tokens_per_task", "tok/task", 0),
    ("delta_elo", "ΔElo", 0),
    ("delta_elo_per_1k", "ΔElo/1K", 1),
    ("marginal_elo_per_1k", "marg/1K", 1),
    ("pass_at_1", "pass@1", 3),
    ("pass_at_k", "pass@k", 3),
    ("tokens_per_success", "tok/success", 0),
    ("games", "games", None),
)


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


def compute_elo(comparisons: Path, ledger: Path | None) -> EloData:
    """The same call as ``eloledger elo COMPARISONS [--ledger LEDGER]`` with its defaults (runs
    in a thread): same fit, sandwich intervals, costs, latency and warnings."""
    from eloledger.report.elo_files import elo_of_files

    report = elo_of_files(str(comparisons), str(ledger) if ledger is not None else None)
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


def cell(record: dict[str, Any], key: str, digits: int | None) -> str:
    """A record's value as the table prints it (the CLI's interval text for the CI)."""
    if key == "ci":  # the CLI's text, one-sided bounds included
        from eloledger.report.elo_table import interval_text

        return interval_text(record.get("ci_low"), record.get("ci_high"))
    value = record.get(key)
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float) and digits is not None:
        return f"{value:,.{digits}f}" if digits == 0 else f"{value:.{digits}f}"
    return visible(str(value))  # names come from files: no control byte reaches the terminal


def sort_value(record: dict[str, Any], key: str) -> tuple[int, Any]:
    """Missing values sort last whatever the direction."""
    value = record.get("ci_low") if key == "ci" else record.get(key)
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return (1, 0)
    return (0, value if not isinstance(value, str) else value.lower())


def sorted_players(players: Sequence[dict[str, Any]], key: str, reverse: bool) -> list[dict]:
    """The players by ``key`` (missing values last either way): the table's and the
    Markdown export's order."""
    present = [p for p in players if sort_value(p, key)[0] == 0]
    missing = [p for p in players if sort_value(p, key)[0] == 1]
    present.sort(key=lambda p: sort_value(p, key)[1], reverse=reverse)
    return present + missing


def finite(value: Any) -> bool:
    """A real number (not a bool, not NaN/inf)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
