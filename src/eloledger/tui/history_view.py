"""The History view: the run index and the direction audit, as ``eloledger history``/``audit``.

A screen over the app (``h``, or "Run history" in the palette; escape closes it) rather than a
fifth tab, so the tab bar every other snapshot shows stays as it is. It reads the index with the
CLI's own functions (:func:`eloledger.history.read_index`, :func:`~eloledger.history.audit`) in
a thread worker and shows the CLI's columns: one row per run and arm, then one row per ISO week
(``a``: per run) with **COST DRIFT** flagged where tokens per task rose while the n=1 pass rate
did not. Names come from files, so every cell is shown as plain text (no markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from eloledger.textsafe import visible


def table_cells(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[Any], *, flag: str = "bold"
) -> list[list[Text]]:
    """The CLI's cells (same digits, same blanks), numbers right-aligned, control chars shown;
    ``flag`` is the style of a COST DRIFT cell."""
    out = []
    for row in rows:
        cells = []
        for col in columns:
            text = visible(col.cell(row, human=True))
            style = flag if text == "COST DRIFT" else ""
            cells.append(
                Text(text, justify="right" if col.digits is not None else "left", style=style)
            )
        out.append(cells)
    return out


def fill_table(table: DataTable, titles: Sequence[str], rows: Sequence[Sequence[Text]]) -> None:
    """Replace the table's columns and rows, each column as wide as its widest cell: given
    widths are drawn right at once, where measured ones are drawn at the titles' widths until
    the table measures its rows (and Textual keeps those lines until the rows change)."""
    table.clear(columns=True)
    for i, title in enumerate(titles):
        table.add_column(title, width=max([cell_len(title)] + [row[i].cell_len for row in rows]))
    table.add_rows(rows)


def fitted(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[Any], width: int, keep: Sequence[str]
) -> tuple[list[Any], list[dict[str, Any]]]:
    """The columns that fit whole in ``width`` cells, and the rows with long names cut.

    A DataTable wider than the screen shows its last column cut at the edge, and a cut number
    reads as another (``19`` for 199). So long names (text, never a number) are cut with "…"
    to 14 cells first, then whole columns give way (the CLI's ``drop`` order, then empty and
    constant ones), then the names are cut only as far as the columns left need."""
    from eloledger.tui.elo_table import fit_columns

    out = _cut_names([dict(r) for r in rows], columns, width, floor=14)
    texts = [[visible(c.cell(r, human=True)) for c in columns] for r in out]
    order = {c.key: float(c.drop) for c in columns}
    shown = fit_columns([c.title for c in columns], texts, width, keys=[c.key for c in columns],
                        drop_order=order, always=keep)  # fmt: skip
    kept = [columns[i] for i in shown]
    # the names cut again from whole, for the kept columns only: the room the dropped columns
    # left goes back to the names (the widest, a run id, gives way first; an arm stays whole)
    return kept, _cut_names([dict(r) for r in rows], kept, width, floor=8)


def _cut_names(
    rows: list[dict[str, Any]], columns: Sequence[Any], width: int, floor: int
) -> list[dict[str, Any]]:
    """Cut the widest name column (run, arm, period) in the middle with "…", down to ``floor``
    cells, until the columns fit ``width`` (in place; returns ``rows``)."""
    while True:
        widths = {c.key: max([len(c.title)] + [len(c.cell(r, human=True)) for r in rows]) + 2
                  for c in columns}  # fmt: skip
        over = sum(widths.values()) - width
        names = [c for c in columns if c.key in CUTTABLE and widths[c.key] - 2 > floor]
        if over <= 0 or not names:
            return rows
        widest = max(names, key=lambda c: widths[c.key])
        limit = max(floor, widths[widest.key] - 2 - over)
        for r in rows:
            text = str(r.get(widest.key) or "")
            if len(text) > limit:  # both ends stay: run ids and arm names differ at either
                head = limit // 2
                r[widest.key] = text[:head] + "…" + text[len(text) - (limit - 1 - head) :]


RUN_KEYS = ("time", "run", "arm", "tokens")  # never left out of the runs table
CUTTABLE = ("run", "arm", "period")  # names: cut with "…" when whole columns still do not fit


class HistoryScreen(Screen[None]):
    """Every indexed run (history) and the audit per week or run, with the drift flag."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,h", "close", "Close"),  # q quits, as everywhere
        Binding("r", "reload", "Reload"),
        Binding("a", "toggle_by", "Audit per week/run"),
    ]
    DEFAULT_CSS = """
    HistoryScreen { layout: vertical; }
    HistoryScreen #history-status { height: auto; padding: 0 1; background: $panel; }
    HistoryScreen #history-runs { height: 1fr; }
    HistoryScreen #history-verdicts { height: auto; max-height: 4; padding: 0 1; }
    HistoryScreen .history-title { height: 1; padding: 0 1; text-style: bold; }
    HistoryScreen #history-audit { height: auto; max-height: 40%; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.by = "week"
        self.loaded = 0  # bumped after each load (tests wait for it, not for a clock)
        self.entries: list[dict[str, Any]] = []
        self.audit: list[dict[str, Any]] = []
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Reading the run index…", id="history-status")
            yield Static("Runs (one row per run and arm)", classes="history-title")
            yield DataTable(id="history-runs", cursor_type="row", zebra_stripes=True)
            yield Static("", id="history-verdicts")
            yield Static("Audit", id="history-audit-title", classes="history-title")
            yield DataTable(id="history-audit", cursor_type="row")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#history-runs", DataTable).focus()
        self.action_reload()

    def on_resize(self) -> None:
        if self.loaded:  # the columns that fit depend on the width
            self._show(self.entries, self.audit, self.error)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_toggle_by(self) -> None:
        self.by = "run" if self.by == "week" else "week"
        self.action_reload()

    @work(thread=True, exclusive=True, group="history")
    def action_reload(self) -> None:
        from eloledger.errors import UserError
        from eloledger.history import audit, read_index

        try:
            entries = read_index()
            rows, error = audit(entries, by=self.by), None
        except UserError as exc:  # a bad line: say which, show nothing half-read
            entries, rows, error = [], [], exc.one_line()
        self.app.call_from_thread(self._show, entries, rows, error)

    def _show(
        self, entries: list[dict[str, Any]], rows: list[dict[str, Any]], error: str | None
    ) -> None:
        from eloledger.history import (
            AUDIT_COLUMNS,
            HISTORY_COLUMNS,
            audit_rows,
            history_rows,
            index_path,
            verdict_lines,
        )
        from eloledger.tables import Column

        self.entries, self.audit, self.error = entries, rows, error
        runs = self.query_one("#history-runs", DataTable)
        width = max(20, (self.size.width or self.app.size.width) - 2)  # a scrollbar's room
        columns, records = fitted(history_rows(entries), HISTORY_COLUMNS, width, RUN_KEYS)
        fill_table(runs, [c.title for c in columns], table_cells(records, columns))
        columns = [Column("period", self.by), *AUDIT_COLUMNS[1:]]
        columns, records = fitted(audit_rows(rows), columns, width, ("period", "flag"))
        table = self.query_one("#history-audit", DataTable)
        error_color = self.app.theme_variables.get("error", "red")  # a Rich style, not "$error"
        fill_table(table, [c.title for c in columns],
                   table_cells(records, columns, flag=f"bold {error_color}"))  # fmt: skip
        self.query_one("#history-audit-title", Static).update(
            Text(f"Audit per {self.by} (a: per {'run' if self.by == 'week' else 'week'})")
        )
        self.query_one("#history-verdicts", Static).update(
            Text("\n".join(visible(line) for line in verdict_lines(entries)))
        )
        self.query_one("#history-status", Static).update(self._status(error, _short(index_path())))
        self.loaded += 1

    def _status(self, error: str | None, where: Any) -> Content:
        if error is not None:
            return Content.styled(f"✗ {error}", "bold $error")
        if not self.entries:
            return Content(f"No runs indexed yet: eloledger run adds each run ({where}).")
        drift = [r["period"] for r in self.audit if r["cost_drift"]]
        parts = [Content(f"{len(self.entries)} run(s) in {where}")]
        if drift:
            parts += [
                Content(" · "),
                Content.styled(f"COST DRIFT in {', '.join(drift)}", "bold $error"),
                Content(": tokens per task rose while the n=1 pass rate did not"),
            ]
        return Content("").join(parts)


def _short(path: Path) -> str:
    """The index path with the home folder as ``~`` (shorter, and the same on every machine)."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
