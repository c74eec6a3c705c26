"""Render a list of records as a table, CSV, Markdown or JSON: one place for every command.

The width rule: a table fits ``COLUMNS`` when it is set (on a terminal or
not, as ``ls``, git and Rich honour it), else the terminal's width (else 80); piped or
redirected output without ``COLUMNS`` has no limit (scripts get every column). ``terminal_width``
says how wide that is; ``render_table(..., width=W)`` first leaves out the columns that say
nothing (blank, or one value in every row), then the ones with a ``drop`` rank (highest first),
then shortens the widest text column with "…" (a number is never
cut), and says in a last line what was left out. CSV, Markdown and JSON carry every column.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len

from eloledger.textsafe import visible


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    digits: int | None = None  # None: print as is; n: fixed-point with n decimals
    drop: int = 0  # 0: always shown; n > 0: left out to fit a terminal, highest n first
    group: bool = False  # thousands separators in tables (never in CSV/Markdown)

    def cell(self, record: Mapping[str, Any], *, human: bool = False) -> str:
        value = record.get(self.key)
        if value is None:
            return ""
        if isinstance(value, float):
            if math.isnan(value):
                return ""
            if math.isinf(value):
                return "inf" if value > 0 else "-inf"
            sep = "," if human and self.group else ""
            if self.digits is not None:
                return f"{value:{sep}.{self.digits}f}"
            return f"{value:,}" if sep else f"{value:g}"
        if isinstance(value, bool):
            return "yes" if value else ""
        if isinstance(value, int) and human and self.group:
            return f"{value:,}"
        return visible(str(value))  # a name from a file never reaches a terminal raw


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def arm_letters(names: Iterable[str]) -> dict[str, str]:
    """One letter per arm, the same on every table, plot, legend and figure.

    By name, not by position on a view: the arms in name order get A, B, C, … (then a–z and
    0–9), so a plot sorted by cost, a table sorted by Elo and a curves view in the ledger's
    order all call the same arm A (they used to name three different arms A).
    """
    ordered = sorted({str(name) for name in names})
    return {name: LETTERS[i % len(LETTERS)] for i, name in enumerate(ordered)}


def legend_lines(keys: Sequence[str], width: int, gap: str = "  ") -> list[str]:
    """Legend entries (``"A best_of_1"``; Rich markup allowed) packed into lines of at most
    ``width`` visible cells: an entry that does not fit starts a new line, never cut."""
    from rich.text import Text

    lines: list[str] = []
    line, used = "", 0
    for key in keys:
        size = Text.from_markup(key).cell_len
        if line and used + len(gap) + size > width:
            lines.append(line)
            line, used = "", 0
        line, used = (line + gap + key, used + len(gap) + size) if line else (key, size)
    if line:
        lines.append(line)
    return lines


def terminal_width(stream: Any = None) -> int | None:
    """How wide tables may be on ``stream`` (stdout): ``COLUMNS`` if set (a user who exports
    it, or writes ``COLUMNS=100 eloledger ... | less``, means it); else, on a terminal, its
    width, else 80; else (piped or redirected) None: no limit."""
    stream = sys.stdout if stream is None else stream
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        is_tty = stream.isatty()
    except (AttributeError, ValueError):
        return None
    if not is_tty:
        return None
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    return columns or 80


def table_width(wide: bool = False) -> int | None:
    """The limit a command's table gets: none with ``--wide``, else the terminal's width."""
    return None if wide else terminal_width()


def wrap(text: str, width: int | None) -> str:
    """A note line wrapped to the table's width (unchanged without a limit); a name from a
    file in it (an anchor player, an arm) is shown with its control characters escaped."""
    lines = [visible(line) for line in text.split("\n")]
    if width is None:
        return "\n".join(lines)
    return "\n".join(fill(line, width) if line else line for line in lines)


def fill(text: str, width: int | None, indent: str = "", hang: str | None = None) -> str:
    """``text`` as lines of at most ``width`` columns, broken only between words.

    Why not ``textwrap.fill`` as is: it cuts a word longer than the line, and at hyphens, so a
    URL, a path or a command to copy came out in pieces ("silentl / y" where the terminal did
    it). A word longer than the line stays whole and runs over. ``indent`` starts the first
    line, ``hang`` (default: as many spaces) the others; no ``width``: one line.
    """
    hang = " " * len(indent) if hang is None else hang
    if width is None:
        return indent + text
    return textwrap.fill(
        text,
        max(width, len(indent) + 1, len(hang) + 1),
        initial_indent=indent,
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    )


def render_table(
    records: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    *,
    width: int | None = None,
    wide_hint: str = "--wide",
) -> str:
    """Aligned plain text: numbers right, text left; at most ``width`` characters a line.

    What goes first to fit: a column that says nothing here (blank in every row, or one value
    in every row of several, like an all-zero ``usage missing``), then the ``drop`` ranks.
    """
    shown = list(columns)
    hidden: list[Column] = []
    said: dict[str, str] = {}  # a constant column left out -> the value it had everywhere

    def fits() -> bool:
        return width is None or _line_width(shown, _cells(records, shown)) <= width

    if not fits():
        for column in reversed([c for c in columns if c is not columns[0]]):
            value = _constant(records, column)
            if value is None or (not column.drop and not _nothing(value)):
                continue  # an always-shown column goes only when it is blank or zero
            shown.remove(column)
            hidden.append(column)
            said[column.title] = value
            if fits():
                break
    while not fits():
        droppable = [i for i, c in enumerate(shown) if c.drop]
        if not droppable:
            break
        hidden.append(shown.pop(max(droppable, key=lambda i: (shown[i].drop, i))))
    body = _cells(records, shown)
    if width is not None:
        body = _shorten(shown, body, width)
    out = _aligned(shown, body)
    if hidden:
        names = ", ".join(
            c.title + (f" ({_said(said[c.title])})" if c.title in said else "")
            for c in columns
            if c in hidden
        )
        out += "\n" + wrap(
            f"(not shown to fit {width} columns: {names}; {wide_hint} shows all)", width
        )
    return out


def _constant(records: Sequence[Mapping[str, Any]], column: Column) -> str | None:
    """The one cell a column shows in every row ("" when blank everywhere), else None; one
    row is never constant (it would say nothing of every column)."""
    cells = {column.cell(r, human=True) for r in records}
    if len(cells) != 1 or (len(records) < 2 and cells != {""}):
        return None
    return next(iter(cells))


def _nothing(value: str) -> bool:
    return value == "" or (_looks_numeric(value) and float(value.replace(",", "")) == 0)


def _said(value: str) -> str:
    return "blank in every row" if value == "" else f"{value} in every row"


def _cells(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> list[list[str]]:
    return [[c.cell(r, human=True) for c in columns] for r in records]


def _widths(columns: Sequence[Column], body: Sequence[Sequence[str]]) -> list[int]:
    """Terminal cells, not code points: a CJK name takes two per character."""
    return [
        max([cell_len(c.title)] + [cell_len(row[i]) for row in body]) for i, c in enumerate(columns)
    ]


def _pad(cell: str, width: int, right: bool) -> str:
    room = " " * max(0, width - cell_len(cell))
    return room + cell if right else cell + room


def _line_width(columns: Sequence[Column], body: Sequence[Sequence[str]]) -> int:
    widths = _widths(columns, body)
    return sum(widths) + 2 * max(0, len(widths) - 1)


def _shorten(columns: Sequence[Column], body: list[list[str]], width: int) -> list[list[str]]:
    """Cut the widest text column with "…" until the lines fit. A number is never cut, in a
    number column or in a text one ("n/a" beside "0.609"): a cut number reads as another."""
    numeric = _numeric(columns, body)
    # how narrow each column can get: its title, its numbers, and 8 cells of text
    floor = [
        max([8, cell_len(c.title)] + [cell_len(row[i]) for row in body if _looks_numeric(row[i])])
        for i, c in enumerate(columns)
    ]
    while _line_width(columns, body) > width:
        widths = _widths(columns, body)
        text_cols = [i for i in range(len(columns)) if not numeric[i] and widths[i] > floor[i]]
        if not text_cols:
            break
        i = max(text_cols, key=lambda k: widths[k])
        limit = max(floor[i], widths[i] - (_line_width(columns, body) - width))
        cut = _cutter([row[i] for row in body], limit)
        body = [
            [
                cell if k != i or len(cell) <= limit or _looks_numeric(cell) else cut(cell)
                for k, cell in enumerate(row)
            ]
            for row in body
        ]
        if _widths(columns, body)[i] == widths[i]:
            break
    return body


def _cutter(cells: Sequence[str], limit: int) -> Callable[[str], str]:
    """How a column's cells are cut to ``limit``: at the end ("self_consiste…"), unless that
    makes two different cells read the same (run ids that differ in their last characters,
    "best_of_4_…" and "best_of_8_…"); then in the middle, keeping each cell's end."""

    def at_end(cell: str) -> str:
        return cell[: limit - 1] + "…"

    def in_middle(cell: str) -> str:
        head = (limit - 1) // 2
        return cell[:head] + "…" + cell[len(cell) - (limit - 1 - head) :]

    long = {c for c in cells if len(c) > limit and not _looks_numeric(c)}
    short = set(cells) - long
    ends = {at_end(c) for c in long}
    return at_end if len(ends) == len(long) and not ends & short else in_middle


def _numeric(columns: Sequence[Column], body: Sequence[Sequence[str]]) -> list[bool]:
    return [all(_looks_numeric(row[i]) for row in body if row[i]) for i in range(len(columns))]


def _aligned(columns: Sequence[Column], body: Sequence[Sequence[str]]) -> str:
    header = [visible(c.title) for c in columns]
    widths = _widths(columns, body)
    numeric = _numeric(columns, body)

    def line(cells: Sequence[str]) -> str:
        parts = [_pad(cell, w, num) for cell, w, num in zip(cells, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(row) for row in body)
    return "\n".join(out)


def render_csv(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.key for c in columns])
    for r in records:
        writer.writerow([c.cell(r) for c in columns])
    return buf.getvalue().rstrip("\n")


def render_markdown(records: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(esc(c.title) for c in columns) + " |"]
    lines.append("|" + "|".join("---:" if c.digits is not None else "---" for c in columns) + "|")
    for r in records:
        lines.append("| " + " | ".join(esc(c.cell(r)) for c in columns) + " |")
    return "\n".join(lines)


def to_json(payload: Any) -> str:
    """JSON with NaN/inf turned into null, so every consumer can parse it."""
    return json.dumps(_finite(payload), indent=2, ensure_ascii=False)


def render(
    fmt: str,
    records: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    *,
    width: int | None = None,
) -> str:
    """``width`` limits tables only; CSV and Markdown always carry every column."""
    if fmt == "table":
        return render_table(records, columns, width=width)
    if fmt == "csv":
        return render_csv(records, columns)
    if fmt == "md":
        return render_markdown(records, columns)
    raise ValueError(f"unknown format {fmt!r}")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _looks_numeric(text: str) -> bool:
    try:
        float(text.replace(",", ""))  # 1,234,567: thousands separators
    except ValueError:
        return text in ("inf", "-inf")
    return True
