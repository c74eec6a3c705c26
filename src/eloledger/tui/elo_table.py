"""The Elo tab's table: ``eloledger elo``'s columns (``report.elo_columns``: the same titles,
digits, cell texts and narrow-screen order), sorted, row styles for the knee/dominated/below
threshold, and only whole columns.

A column that does not fit is left out whole rather than cut at the edge (``0.609`` never reads
``0.6``), in the CLI's order (``give_way_order``): the columns that say nothing here, then the
drop ranks. What only a screen has: the sorted column stays and its title carries the arrow,
each name carries its arm's letter from the plot, and at a width where the CLI would cut names
with "…" the other columns give way from the right (the arm, its Elo and interval stay).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from eloledger.report.elo_columns import EloColumn, give_way_order, row_texts
from eloledger.tui.elo_data import finite

KEEP = ("name", "elo", "ci")  # never left out, even where the CLI would cut names instead
PADDING = 2  # DataTable's cell_padding (1) on both sides


def fit_columns(
    titles: Sequence[str],
    cells: Sequence[Sequence[str]],
    width: int,
    keep: Sequence[int] = (),
    *,
    keys: Sequence[str],
    drop_order: Mapping[str, float],
    always: Sequence[str] = (),
) -> list[int]:
    """The indexes of the columns to show so that all fit whole in ``width`` cells (the
    History view's tables).

    ``cells`` holds each row's cell texts. Dropped first: empty columns, then constant ones
    (two rows or more), then by ``drop_order`` (highest first, then from the right);
    ``keep`` and the ``always`` keys are never dropped."""
    n = len(titles)
    widths = [max([len(titles[i])] + [len(row[i]) for row in cells]) + PADDING for i in range(n)]
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


def shown_columns(
    widths: Sequence[int],
    order: Sequence[int],
    width: int,
    *,
    keep: Collection[int] = (),
    always: Collection[int] = (),
) -> list[int]:
    """The columns that fit whole in ``width`` cells: the shortest start of ``order`` (the
    CLI's give-way order) is left out; if the rest is still too wide, the other columns from
    the right except ``always``. ``keep`` (the sorted column) never goes."""
    n = len(widths)
    shown = list(range(n))
    last_resort = [i for i in reversed(range(n)) if i not in order and i not in always]
    for i in [*order, *last_resort]:
        if sum(widths[j] for j in shown) <= width:
            break
        if i not in keep:
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
        columns: Sequence[EloColumn],
        *,
        sort_key: str,
        reverse: bool,
        knee_name: str | None,
        threshold: float,
        letters: dict[str, str],
        width: int,
    ) -> None:
        """Fill the table with the columns that fit in ``width`` cells (``columns`` start with
        the player's name, which carries the arm's letter from ``letters``)."""
        arrow = "↓" if reverse else "↑"
        titles = [f"{c.title}{arrow}" if c.key == sort_key else c.title for c in columns]
        texts = row_texts(players, columns)
        lettered = [
            [lettered_name(p, row[0], letters), *row[1:]]
            for p, row in zip(players, texts, strict=True)
        ]
        widths = [
            max([cell_len(titles[i])] + [cell_len(row[i]) for row in lettered]) + PADDING
            for i in range(len(columns))
        ]
        keep = {i for i, c in enumerate(columns) if c.key == sort_key}
        always = {i for i, c in enumerate(columns) if c.key in KEEP}
        order = give_way_order(columns, texts)
        shown = shown_columns(widths, order, width, keep=keep, always=always)
        self.hidden = [c.title for i, c in enumerate(columns) if i not in shown]
        self.clear(columns=True)
        for i in shown:  # widths given: drawn right at once, not at the titles' widths first
            self.add_column(titles[i], key=columns[i].key, width=widths[i] - PADDING)
        for p, row in zip(players, texts, strict=True):
            cells = self._cells(p, row, columns, shown, knee_name, threshold, letters)
            self.add_row(*cells, key=p["name"])

    @staticmethod
    def _cells(
        player: dict[str, Any],
        row: Sequence[str],
        columns: Sequence[EloColumn],
        shown: Sequence[int],
        knee_name: str | None,
        threshold: float,
        letters: dict[str, str],
    ) -> list[Text]:
        """One row's cells: numbers right, text left, in the row's style."""
        style = row_style(player, knee_name, threshold)
        cells = []
        for i in shown:
            column = columns[i]
            text = Text(
                row[i], style=style, justify="right" if column.digits is not None else "left"
            )
            if column.key == "name" and player["name"] in letters:
                letter = (letters[player["name"]] + " ", "bold yellow")
                text = Text.assemble(letter, Text(row[i], style=style))
            cells.append(text)
        return cells


def lettered_name(player: dict[str, Any], name: str, letters: dict[str, str]) -> str:
    """The name cell as the screen reads it: "A best_of_1" (the arm's letter on the plot)."""
    letter = letters.get(player["name"])
    return f"{letter} {name}" if letter else name


def row_style(player: dict[str, Any], knee_name: str | None, threshold: float) -> str:
    """The knee in reverse, a dominated arm dim, a marginal step below the threshold italic:
    what the CLI's worth-it column says, as the row's look."""
    marginal = player.get("marginal_elo_per_1k")
    if player["name"] == knee_name:
        return "bold reverse"
    if player.get("dominated"):
        return "dim"
    if finite(marginal) and marginal < threshold:
        return "italic"
    return ""
