"""The Elo tab: the Elo-per-token table (sortable), Elo vs tokens on a log axis, the knee.

A composition: the data and its fit (``elo_data``: the same call as ``eloledger elo
COMPARISONS --ledger LEDGER``, in a thread worker), the table (``elo_table``), the plot
(``elo_plot``), the threshold and open dialogs (``elo_threshold``, ``elo_open``) and the
exports (``elo_export``); the budget curves and fairness verdict are ``budget_views``. The
"worth it" threshold is a marginal Elo per 1K tokens per task; the knee is the costliest
frontier arm whose marginal step still clears it. The tab never imports the app: it asks for
a tab with a ``ShowTab`` message and words errors with ``errors.error_text``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static
from textual_plot import PlotWidget

from eloledger.budget.gates import knee  # the CLI's `elo --threshold` knee, one rule
from eloledger.report.elo_columns import EloColumn
from eloledger.tables import arm_letters, legend_lines
from eloledger.tui import fmt
from eloledger.tui.elo_data import (
    DEFAULT_THRESHOLD,
    EloData,
    compute_elo,
    loud_warnings,
    sorted_players,
)
from eloledger.tui.elo_open import OpenScreen
from eloledger.tui.elo_plot import draw_arms, plotted
from eloledger.tui.elo_table import EloTable
from eloledger.tui.elo_threshold import ThresholdScreen
from eloledger.tui.errors import error_text
from eloledger.tui.messages import ShowTab

__all__ = ["EloData", "EloTab", "OpenScreen", "ThresholdScreen", "compute_elo", "knee"]

# Columns whose first sort is ascending: names A to Z, best rank first, cheapest and fastest
# first; every other column sorts highest first.
ASCENDING = frozenset(
    {"name", "rank", "rank_ci", "tokens_per_task", "tokens_per_success", "latency_p95_ms"}
)


class EloTab(Vertical, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort_next", "Sort", key_display="s/S"),
        Binding("S", "sort_reverse", "Reverse", show=False),
        Binding("t", "threshold", "Threshold"),
        Binding("o", "open", "Open"),
        Binding("e", "example", "Example", show=False),
        Binding("v", "toggle_view", "Curves"),
        Binding("r", "next_reference", "Reference", show=False),
        Binding("f", "fairness", "Fairness"),
        Binding("c", "export('csv')", "CSV/MD", key_display="c/m"),
        Binding("m", "export('md')", "Markdown", show=False),
    ]
    DEFAULT_CSS = """
    EloTab { height: 1fr; }
    EloTab #elo-status { height: auto; padding: 0 1; color: $text-muted; }
    EloTab #elo-usage { height: auto; padding: 0 1; color: $warning; text-style: bold; }
    EloTab #elo-table { height: auto; max-height: 12; scrollbar-size-horizontal: 0; }
    EloTab #elo-verdict { height: auto; padding: 0 1; }
    EloTab #elo-rows { height: auto; padding: 0 1; color: $text-muted; }
    EloTab #elo-plot { height: 1fr; min-height: 6; }
    EloTab #elo-legend { height: auto; padding: 0 1; dock: bottom; }  /* every arm, whatever the height */
    EloTab #elo-empty { padding: 1 2; color: $text-muted; }
    """

    def __init__(self, inputs: tuple[Path, Path | None] | None = None) -> None:
        super().__init__()
        self.inputs = inputs
        self.data: EloData | None = None
        self.threshold = DEFAULT_THRESHOLD
        self.sort_key = "elo"  # the sorted column's key
        self.sort_reverse = True
        self.exported: list[Path] = []
        self.view = "arms"  # or "curves": the budget curves of the ledger's sessions
        self.curves: Any = None
        self.verdict: dict[str, Any] | None = None
        self.reference = 0  # which arm's best-of-k reference the curves view draws
        self.verdict_shown = False  # the fairness line takes a row only when it has something
        self._warnings_untold: list[str] = []  # toasted when the tab is next shown

    def compose(self) -> ComposeResult:
        yield Static(
            "No Elo table yet.\n\n• [b]o[/b] open a comparisons file (+ its ledger)\n"
            "• [b]e[/b] the example shipped with eloledger (best-of-k arms)\n"
            "• a run started here (ctrl+r: the demo) fills this tab when it ends",
            id="elo-empty",
        )
        yield Static("", id="elo-status")
        yield Static("", id="elo-usage")
        yield EloTable(id="elo-table")
        yield Static("", id="elo-rows")
        yield Static("", id="elo-verdict")
        yield PlotWidget(id="elo-plot", allow_pan_and_zoom=False)
        yield Static("", id="elo-legend")

    def on_mount(self) -> None:
        plot = self.query_one("#elo-plot", PlotWidget)
        plot.margin_top = 1  # 80×24: every row goes to the data (the legend is below it)
        plot.margin_bottom = 1
        self._show(False)
        if self.inputs is not None:
            self.load(*self.inputs)

    def on_resize(self) -> None:
        """The columns that fit and the ticks the plot has rows for change with the size."""
        if self.data is not None:
            self.call_after_refresh(self._redraw)

    def _redraw(self) -> None:
        self.refresh_table()
        if self.view == "arms":
            self.refresh_plot()

    def _show(self, has_data: bool) -> None:
        self.can_focus = not has_data  # empty: the tab itself takes focus so 'o'/'e' work
        self.query_one("#elo-empty").display = not has_data
        if not has_data:
            self.query_one("#elo-usage").display = False
        for wid in (
            "#elo-status",
            "#elo-table",
            "#elo-rows",
            "#elo-verdict",
            "#elo-plot",
            "#elo-legend",
        ):
            self.query_one(wid).display = has_data

    # -- loading --------------------------------------------------------------------------------

    def explain_empty(self, why: str) -> None:
        """Say why there is no table (a cancelled run), keeping the ways to get one."""
        self.query_one("#elo-empty", Static).update(
            f"{fmt.markup(why)}\n\n• [b]o[/b] open a comparisons file (+ its ledger)\n"
            "• [b]e[/b] the example shipped with eloledger"
        )

    def load(self, comparisons: Path, ledger: Path | None = None, spec: Any = None) -> None:
        """Fit the files in a worker; with the ``spec`` of the run that wrote them, anchored
        as that run's own table (``eloledger run``) is."""
        self.query_one("#elo-empty", Static).update(f"Fitting {comparisons.name} …")
        self._compute(comparisons, ledger, spec)

    @work(thread=True, exclusive=True, group="elo")
    def _compute(self, comparisons: Path, ledger: Path | None, spec: Any) -> None:
        try:
            data = compute_elo(comparisons, ledger, spec)
        except Exception as exc:
            self.app.call_from_thread(self._failed, error_text(exc))
            return
        self.app.call_from_thread(self.set_data, data)

    def _failed(self, message: str) -> None:
        self.query_one("#elo-empty", Static).update(f"Could not build the Elo table:\n{message}")
        self.notify(message, title="Elo", severity="error", timeout=10)

    def set_data(self, data: EloData) -> None:
        self.data = data
        if self.sort_key not in [c.key for c in data.columns()]:
            self.sort_key, self.sort_reverse = "elo", True
        self.curves = None
        self.verdict = None
        self.view = "arms"
        self._say_verdict("")
        self._show(True)
        self.refresh_table()
        self.refresh_plot()
        self.refresh_bindings()
        focused = self.screen.focused
        idle = focused is None or focused is self or type(focused).__name__ == "ContentTabs"
        if self.is_on_screen and idle:
            self.query_one("#elo-table", DataTable).focus()
        usage = loud_warnings(data.warnings)
        shown = self.query_one("#elo-usage", Static)
        shown.update("\n".join(map(fmt.markup, usage.splitlines())))
        shown.display = bool(usage)
        self._warnings_untold = list(data.warnings)
        if self.is_on_screen:
            self._tell_warnings()
        self.call_after_refresh(self._redraw)  # once laid out: the real width and height

    def on_show(self) -> None:
        self._tell_warnings()

    def _tell_warnings(self) -> None:
        """One toast (three stacked ones hid everything else at 80x24), shown when the tab is:
        a run fitted in the background must not cover the Run view it finished on."""
        warnings, self._warnings_untold = self._warnings_untold, []
        if warnings:
            more = len(warnings) - 1
            tail = f"\n(+{more} more: `eloledger elo` prints them all)" if more else ""
            title = "Elo warning" if not more else f"Elo: {more + 1} warnings"
            self.notify(warnings[0] + tail, title=title, severity="warning", timeout=8)

    # -- drawing --------------------------------------------------------------------------------

    def columns(self) -> tuple[EloColumn, ...]:
        """The table's columns (``eloledger elo``'s for this report); none before a fit."""
        return self.data.columns() if self.data is not None else ()

    def sorted_players(self) -> list[dict[str, Any]]:
        assert self.data is not None
        column = next(c for c in self.columns() if c.key == self.sort_key)
        return sorted_players(self.data.players, column.sort_by or column.key, self.sort_reverse)

    def refresh_table(self) -> None:
        if self.data is None:
            return
        table = self.query_one("#elo-table", EloTable)
        knee_name = knee(self.data.players, self.threshold) if self.data.has_costs else None
        players = self.sorted_players()
        width = self.size.width or self.app.size.width  # the table spans the tab (known early)
        if len(players) > 10:  # max-height 12: a vertical scrollbar takes two cells
            width -= 2
        table.show(
            players,
            self.columns(),
            sort_key=self.sort_key,
            reverse=self.sort_reverse,
            knee_name=knee_name,
            threshold=self.threshold,
            letters=self.plot_letters(),
            width=width,
        )
        # one line each at any width: the files shown give way (cut in their middle) to the
        # anchor and the knee; the columns left out get a line of their own
        line_w = max(20, (self.size.width or self.app.size.width) - 2)
        head = f"anchor {self.data.anchor} = 1000 Elo"
        if self.data.has_costs:
            head += f" · knee: {knee_name or '-'}"
        else:
            head += " · no ledger: token columns empty"
        room = line_w - len(head) - 3
        source = fmt.middle(str(self.data.source), room) if room >= 12 else ""
        status = f"{head} · {source}" if source else head
        self.query_one("#elo-status", Static).update(
            fmt.fit_parts("", [fmt.markup(status)], line_w)
        )
        rows = fmt.fit_parts(
            "",
            [
                "rows: [reverse]knee[/]",
                f"[i]italic[/]: marg. < {self.threshold:g} Elo/1K (t)",
                "[dim]dim[/]: dominated",
            ],
            line_w,
        )
        if table.hidden:  # one line, the plot keeps its rows: as many titles as fit, in order
            titles = [fmt.markup(title) for title in table.hidden]
            rows += "\n" + fmt.fit_parts("hidden: ", titles, line_w, sep=", ")
        self.query_one("#elo-rows", Static).update(rows)

    def plotted(self) -> list[dict[str, Any]]:
        """The arms with a token cost and an Elo, cheapest first (the points on the plot)."""
        assert self.data is not None
        return plotted(self.data)

    def plot_letters(self) -> dict[str, str]:
        """One letter per arm for the table, both plots and their legends: the fit's arms and
        the curves' arms together, by name (``tables.arm_letters``)."""
        names = [p["name"] for p in self.data.players] if self.data is not None else []
        if self.curves is not None:
            names += [arm.name for arm in self.curves.arms]
        return arm_letters(names)

    def refresh_plot(self) -> None:
        if self.data is None:
            return
        plot = self.query_one("#elo-plot", PlotWidget)
        letters = self.plot_letters()
        width = max(20, (self.size.width or self.app.size.width) - 2)  # the legend's padding
        if self.view == "curves" and self.curves is not None:
            from eloledger.tui.budget_views import draw_curves

            legend = draw_curves(plot, self.curves, self.reference, letters, width)
        else:
            legend = draw_arms(plot, self.data, self.threshold, letters, width)
        self.query_one("#elo-legend", Static).update(legend)

    # -- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("sort_next", "sort_reverse", "threshold", "export"):
            return self.data is not None
        if action in ("toggle_view", "fairness"):
            return self.data is not None and self.data.ledger is not None
        return True

    def action_sort_next(self) -> None:
        """Sort by the next column on screen (a hidden one would push others out)."""
        table = self.query_one("#elo-table", EloTable)
        keys = [str(c.key.value) for c in table.ordered_columns]
        if self.sort_key not in keys:
            return
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.sort_reverse = self.sort_key not in ASCENDING
        self.refresh_table()

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.refresh_table()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        if key == self.sort_key:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_key, self.sort_reverse = key, key not in ASCENDING
        self.refresh_table()

    def action_next_reference(self) -> None:
        """Curves view: draw the next arm's best-of-k reference line (one at a time)."""
        if self.view == "curves" and self.curves is not None:
            self.reference += 1
            self.refresh_plot()

    def action_threshold(self) -> None:
        def done(value: float | None) -> None:
            if value is not None:
                self.threshold = value
                self.refresh_table()
                self.refresh_plot()

        self.app.push_screen(ThresholdScreen(self.threshold), done)

    def action_open(self) -> None:
        def done(paths: tuple[Path, Path | None] | None) -> None:
            if paths is not None:
                self.load(*paths)

        self.app.push_screen(OpenScreen(), done)

    def action_example(self) -> None:
        if self.view == "curves" and self.curves is not None:  # e exports the figure
            from eloledger.tui.budget_views import export_figure
            from eloledger.tui.elo_export import export_folder

            try:
                paths = export_figure(self.curves, export_folder(self.data))
            except Exception as exc:  # a missing matplotlib, a folder we cannot write
                self.notify(error_text(exc), title="Export failed", severity="error", timeout=10)
                return
            self.exported.extend(paths)
            shown = "\n".join(map(str, paths))  # one path a line, each unbroken
            self.notify(f"Wrote\n{shown}", title="Exported", timeout=6)
            return
        from importlib import resources

        folder = Path(str(resources.files("eloledger").joinpath("data", "examples")))
        self.load(folder / "comparisons.csv", folder / "ledger.jsonl")

    def action_toggle_view(self) -> None:
        if self.data is None or self.data.ledger is None:
            return
        if self.view == "curves":
            self.view = "arms"
            self.refresh_table()
            self.refresh_plot()
            return
        self.view = "curves"
        if self.curves is None:
            self.query_one("#elo-status", Static).update("computing budget curves …")
            self._compute_curves(self.data.ledger)
        else:
            self._show_curves(self.curves)

    @work(thread=True, exclusive=True, group="elo-curves")
    def _compute_curves(self, ledger: Path) -> None:
        from eloledger.tui.budget_views import compute_curves

        try:
            curves = compute_curves(ledger)
        except Exception as exc:
            self.app.call_from_thread(
                self.notify, error_text(exc), title="Budget curves", severity="error", timeout=10
            )
            self.view = "arms"
            self.app.call_from_thread(self.refresh_table)
            return
        self.app.call_from_thread(self._show_curves, curves)

    def _show_curves(self, curves: Any) -> None:
        from eloledger.tui.budget_views import curves_status_parts

        self.curves = curves
        if self.view != "curves":
            return
        self.refresh_table()  # an arm only the curves know takes a letter: the table's follow
        self.refresh_plot()
        # what is drawn, then every arm's verdict whole: a second line, never a part cut in two
        width = max(20, (self.size.width or self.app.size.width) - 2)
        title, *verdicts = curves_status_parts(curves)
        lines = legend_lines([f"{title} · v: back", *verdicts], width, gap=" · ")
        self.query_one("#elo-status", Static).update("\n".join(lines))

    def action_fairness(self) -> None:
        if self.data is None or self.data.ledger is None:
            return
        from eloledger.tui.budget_views import FairnessScreen

        ledger = self.data.ledger
        arms = sorted(p["name"] for p in self.data.players)

        def chosen(answer: dict[str, str] | None) -> None:
            if answer is not None:
                self._say_verdict("judging budget fairness …")
                self._compute_fairness(ledger, answer)

        self.app.push_screen(FairnessScreen(arms), chosen)

    @work(thread=True, exclusive=True, group="elo-fairness")
    def _compute_fairness(self, ledger: Path, arms: dict[str, str]) -> None:
        from eloledger.tui.budget_views import compute_fairness, verdict_text

        try:
            record = compute_fairness(ledger, arms)
        except Exception as exc:
            message = f"[$error]{fmt.markup(error_text(exc))}[/]"
            self.app.call_from_thread(self._say_verdict, message)
            return
        self.verdict = record
        text = verdict_text(record)
        self.app.call_from_thread(self._say_verdict, text)

    def _say_verdict(self, text: str) -> None:
        self.verdict_shown = bool(text)
        verdict = self.query_one("#elo-verdict", Static)
        verdict.update(text)
        verdict.display = self.verdict_shown and self.data is not None

    def action_export(self, fmt_name: str) -> None:
        """``c``/``m``: the table as CSV (the CLI's) or Markdown (this sort) next to the run."""
        if self.data is None:
            return
        from eloledger.tui.elo_export import write_export

        try:
            path = write_export(self.data, fmt_name, self.sorted_players())
        except OSError as exc:
            where = exc.filename or "the export folder"
            self.notify(f"{where}: {exc.strerror}", title="Export failed", severity="error")
            return
        self.exported.append(path)
        self.notify(f"Wrote\n{path}", title="Exported", timeout=6)  # the path on its own line

    def commands(self) -> Iterable[SystemCommand]:
        def go(action: str):
            def run() -> None:
                self.post_message(ShowTab("elo", action))

            return run

        yield SystemCommand("Elo: open comparisons + ledger", "o", go("open"))
        yield SystemCommand("Elo: load the shipped example", "e", go("example"))
        yield SystemCommand(
            "Elo: set the 'worth it' threshold", "t (marginal Elo per 1K)", go("threshold")
        )
        yield SystemCommand("Elo: budget curves (toggle the plot)", "v", go("toggle_view"))
        yield SystemCommand("Elo: budget fairness verdict", "f: old/new × 1/N arms", go("fairness"))
        yield SystemCommand("Elo: export CSV", "c (next to the run's files)", go("export('csv')"))
        yield SystemCommand(
            "Elo: export Markdown", "m (next to the run's files)", go("export('md')")
        )
