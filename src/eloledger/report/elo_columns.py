"""The Elo table's columns, defined once for every face: ``eloledger elo`` (and the table
``run``/``demo`` print), the TUI's Elo tab and its Markdown export.

Each column is data: the record key it reads, its title, its decimals, and its ``drop`` rank on a
narrow screen. :func:`cell_text` is the one way a value reads; :func:`give_way_order` is the one
order in which columns are left out when the screen is narrow. The two faces differ only where
the medium does: the TUI colours rows, pins the arm column and marks the sorted one; the CLI
prints plain text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eloledger.tables import Column


@dataclass(frozen=True)
class EloColumn:
    """One column of the Elo table."""

    key: str  # the record's key (or the text key :func:`shown_record` adds)
    title: str
    digits: int | None = None  # decimals of a float; None: as it is (text, counts, yes/no)
    drop: int = 0  # narrow screens: 0 always shown, n > 0 left out highest first
    sort_by: str | None = None  # the record key a sort by this column reads (default: key)

    def table_column(self) -> Column:
        """This column as the CLI's table renderer takes it."""
        return Column(self.key, self.title, self.digits, drop=self.drop)


# The drop ranks keep, at 80 columns with token costs: player, elo, 95% CI, tok/task, d_elo/1k,
# marg/1k, pass@1, tok/success; ``--wide`` (or a wide window) shows every column.
BASE_COLUMNS = (
    EloColumn("name", "player"),
    EloColumn("elo", "elo", 1),
    EloColumn("ci", "95% CI", sort_by="ci_low"),
    EloColumn("rank", "rank", 0, drop=3),
    EloColumn("rank_ci", "rank CI", drop=10, sort_by="rank_low"),
    EloColumn("games", "games", 0, drop=6),
    EloColumn("wins", "wins", 1, drop=9),
)
LC_COLUMNS = (
    EloColumn("lc_elo", "lc_elo", 1),
    EloColumn("lc_ci", "LC 95% CI", sort_by="lc_ci_low"),
)
ELO_COST_COLUMNS = (
    EloColumn("tokens_per_task", "tok/task", 0),
    EloColumn("delta_elo", "d_elo", 1, drop=8),
    EloColumn("delta_elo_per_1k", "d_elo/1k", 2),
    EloColumn("marginal_elo_per_1k", "marg/1k", 2),
    EloColumn("dominated", "dominated", drop=4),
    EloColumn("frontier_share", "frontier", 2, drop=13),
    EloColumn("elo_per_decade", "elo/decade", 1, drop=7),
    EloColumn("raw_elo_per_1k", "raw/1k*", 2, drop=14),
    EloColumn("pass_at_1", "pass@1", 3, drop=1),
    EloColumn("sample_accuracy", "acc/sample", 3, drop=12),
    EloColumn("pass_at_k", "pass@k", 3, drop=5),
    EloColumn("pass_k", "k", 0, drop=11),
    EloColumn("tokens_per_success", "tok/success", 0, drop=2),
    EloColumn("latency_p95_ms", "p95 ms", 0, drop=15),
    EloColumn("worth_it", "worth it"),
)


def cost_columns(report: Any, with_worth_it: bool = False) -> tuple[EloColumn, ...]:
    """The cost columns a report shows: worth-it only with a threshold, p95 only when timed."""
    timed = any(p.get("latency_p95_ms") is not None for p in report.players)
    return tuple(
        c
        for c in ELO_COST_COLUMNS
        if (c.key != "worth_it" or with_worth_it) and (c.key != "latency_p95_ms" or timed)
    )


def elo_columns(report: Any, with_worth_it: bool = False) -> tuple[EloColumn, ...]:
    """Every column the report's table shows, in order: the fit, the length-controlled Elo
    when fitted, the token columns when costs are known."""
    lc = LC_COLUMNS if report.length_coef is not None else ()
    costs = cost_columns(report, with_worth_it) if report.has_costs else ()
    return BASE_COLUMNS + lc + costs


def shown_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record with the texts of its derived cells: the intervals ('950..1040', one-sided
    '1616..+inf', 'n/a'), the rank interval and worth-it as yes/no."""
    from eloledger.report.elo_table import interval_text

    out = dict(record)
    if "worth_it" in record:
        out["worth_it"] = "yes" if record["worth_it"] else "no"
    out["ci"] = interval_text(record.get("ci_low"), record.get("ci_high"))
    if record.get("rank_low") is not None:
        out["rank_ci"] = f"{record['rank_low']}..{record['rank_high']}"
    lo, hi = record.get("lc_ci_low"), record.get("lc_ci_high")
    if lo is not None and math.isfinite(lo) and hi is not None and math.isfinite(hi):
        out["lc_ci"] = f"{lo:.0f}..{hi:.0f}"
    return out


def cell_text(record: Mapping[str, Any], column: EloColumn) -> str:
    """How one value reads in the table, on either face (control characters of names from
    files escaped)."""
    return row_texts([record], [column])[0][0]


def row_texts(
    records: Sequence[Mapping[str, Any]], columns: Sequence[EloColumn]
) -> list[list[str]]:
    """Every row's cell texts (:func:`cell_text`), each record made into text once."""
    out = []
    for record in records:
        shown = shown_record(record)
        out.append([c.table_column().cell(shown, human=True) for c in columns])
    return out


def give_way_order(columns: Sequence[EloColumn], texts: Sequence[Sequence[str]]) -> list[int]:
    """The indexes of the columns in the order they are left out to fit a narrow screen.

    First the columns that say nothing here, from the right: one text in every row of several,
    or blank in every row (a ``drop`` 0 column only when blank or zero); then the ``drop`` ranks,
    highest first (the rightmost on a tie). The first column and the other ``drop`` 0 columns
    never go. A face leaves out the shortest run from the start of this order that makes the
    rest fit: the rule ``tables.render_table`` applies to the CLI's table, so the TUI leaves
    out the same columns first.
    """
    order = []
    for i in range(len(columns) - 1, 0, -1):
        value = _constant([row[i] for row in texts])
        if value is not None and (columns[i].drop or _blank_or_zero(value)):
            order.append(i)
    ranked = [i for i in range(1, len(columns)) if columns[i].drop and i not in order]
    order += sorted(ranked, key=lambda i: (columns[i].drop, i), reverse=True)
    return order


def _constant(cells: Sequence[str]) -> str | None:
    """The one text of a column in every row (a single row counts only when blank)."""
    values = set(cells)
    if len(values) != 1 or (len(cells) < 2 and values != {""}):
        return None
    return next(iter(values))


def _blank_or_zero(text: str) -> bool:
    if text == "":
        return True
    try:
        return float(text.replace(",", "")) == 0
    except ValueError:
        return False
