"""The Elo tab's table: the CLI's columns, sorted, row styles for the knee/dominated/below
threshold, and only whole columns.

A column that does not fit is left out whole rather than cut at the edge (``0.609`` never
reads ``0.6``): empty columns go first, then columns whose every row is the same, then the
CLI's narrow-terminal order; the arm, its Elo, the interval and the sorted column always stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from eloledger.tui.elo_data import COLUMNS, cell, finite

# Which columns give way first on a narrow terminal (highest first), after the empty and the
# constant ones: the order of `eloledger elo`'s DROP_ORDER for the columns the tab shows.
DROP_ORDER = {
    "delta_elo": 8,
    "games": 6,
    "pass_at_k": 5,
    "tokens_per_success": 2,
    "pass_at_1": 1,
    "delta_elo_per_1k": 0.5,
    "marginal_elo_per_1k": 0.4,
    "tokens_per_task": 0.3,
}
KEEP = ("name", "elo", "ci")
PADDING = 2  # DataTable's cell_padding (1) on both sides


def fit_columns(
    titles: Sequence[str],
    cells: Sequence[Sequence[str]],
    width: int,
    keep: Sequence[int] = (),
    *,
    keys: Sequence[str] | None = None,
    drop_order: Mapping[str, float] = DROP_ORDER,
    always: Sequence[str] = KEEP,
) -> list[int]:
    """The indexes of the columns to show so that all fit whole in ``width`` cells.

    ``cells`` holds each row's cell texts. Dropped first: empty columns, then constant ones
    (two rows or more), then by ``drop_order`` (highest first, then from the right);
    ``keep`` and the ``always`` keys are never dropped. ``keys`` name the columns (default:
    the Elo table's)."""
    n = len(titles)
    widths = [max([len(titles[i])] + [len(row[i]) for row in cells]) + PADDING for i in range(n)]
    if keys is None:
        keys = [COLUMNS[i][0] if i < len(COLUMNS) else "" for i in range(n)]
    kept = set(keep) | {i for i in range(n) if keys[i] in always}

    def rank(i: int) -> tuple[int, float, int]:
        values = {row[i] for row in cells}
        empty = values <= {""}
        constant = len(cells) > 1 and len(values) == 1
        return (2 if empty else 1 if constant else 0, drop_order.get(keys[i], 0), i)

    shown = list(range(n))
    for i in sorted((i for i in range(n) if i not in kept), key=rank, reverse=True):
        if sum(widths[j] for j in shown) <= width:
            break
        shown.remove(i)
    return shown


class EloTable(DataTable):
    """The Elo-per-token table: ``show`` fills it from the players in their sort order."""

    hidden: list[str]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, fixed_columns=1, **kwargs)
        self.hidden = []

    def show(
        self,
        players: Sequence[dict[str, Any]],
        *,
        sort_index: int,
        reverse: bool,
        knee_name: str | None,
        threshold: float,
        letters: dict[str, str],
        width: int,
    ) -> None:
        """Fill the table with the columns that fit in ``width`` cells."""
        arrow = "↓" if reverse else "↑"
        titles = [
            f"{title}{arrow}" if index == sort_index else title
            for index, (_, title, _) in enumerate(COLUMNS)
        ]
        texts = [[cell(p, k, d) for k, _, d in COLUMNS] for p in players]
        for row, p in zip(texts, players, strict=True):
            if p["name"] in letters:
                row[0] = f"{letters[p['name']]} {row[0]}"
        shown = fit_columns(titles, texts, width, keep=(sort_index,))
        self.hidden = [COLUMNS[i][1] for i in range(len(COLUMNS)) if i not in shown]
        self.clear(columns=True)
        for i in shown:
            self.add_column(titles[i], key=COLUMNS[i][0])
        for p, row in zip(players, texts, strict=True):
            style = ""
            marginal = p.get("marginal_elo_per_1k")
            if p["name"] == knee_name:
                style = "bold reverse"
            elif p.get("dominated"):
                style = "dim"
            elif finite(marginal) and marginal < threshold:
                style = "italic"
            cells = []
            for i in shown:
                key = COLUMNS[i][0]
                text = Text(row[i], style=style, justify="left" if key == "name" else "right")
                if key == "name" and p["name"] in letters:
                    name = cell(p, "name", None)
                    text = Text.assemble(
                        (letters[p["name"]] + " ", "bold yellow"), Text(name, style=style)
                    )
                cells.append(text)
            self.add_row(*cells, key=p["name"])
