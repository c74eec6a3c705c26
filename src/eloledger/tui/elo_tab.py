"""The Elo tab: the Elo-per-token table (sortable), Elo vs tokens on a log axis, the knee.

The table is exactly what ``eloledger elo COMPARISONS --ledger LEDGER`` prints: both faces call
``eloledger.rating.table.elo_report`` with ``rating.outcomes.ledger_outcomes(...)``. The fit and its
bootstrap run in a thread worker. The plot puts log10(tokens per task) on the x axis (labelled
in tokens), the arms as points, the cost frontier as a line, and the best-of-k reference from
the anchor: +400·log10(k) Elo for k times the anchor's tokens. The "worth it" threshold is a
marginal Elo per 1K tokens per task; the knee is the costliest frontier arm whose marginal step
still clears it (beyond it, more tokens buy less than the threshold).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, Static
from textual_plot import HiResMode, PlotWidget
from textual_plot.axis_formatter import AxisFormatter

from eloledger.rating.gates import knee  # the CLI's `elo --threshold` knee, one rule
from eloledger.textsafe import visible
from eloledger.tui import fmt

DEFAULT_THRESHOLD = 50.0  # Elo per 1K tokens per task
BOOTSTRAP_ROUNDS = 1000

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


def compute_elo(
    comparisons: Path, ledger: Path | None, *, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0
) -> EloData:
    """The same core call as ``eloledger elo`` (runs in a thread)."""
    from eloledger.rating.comparisons import read_comparisons
    from eloledger.rating.table import elo_report

    costs, ledger_warnings = None, []
    if ledger is not None:  # the same per-arm count as `eloledger elo --ledger`
        from eloledger.rating.outcomes import ledger_outcomes

        costs, ledger_warnings = ledger_outcomes(ledger)
    report = elo_report(
        read_comparisons(comparisons), costs=costs, bootstrap_rounds=rounds, seed=seed
    )
    report.warnings[:0] = ledger_warnings
    source = comparisons.name + (f" + {ledger.name}" if ledger else "")
    return EloData(
        list(report.players),
        report.anchor,
        report.has_costs,
        list(report.warnings),
        source,
        report,
        ledger,
    )


def loud_warnings(warnings: Sequence[str]) -> str:
    """The report's warnings that tokens are estimates or scores unsandboxed: they stay on
    screen, not just in a toast."""
    loud = [f"⚠ {w}" for w in warnings if "ESTIMATED" in w or w.startswith("UNSANDBOXED")]
    return "\n".join(loud)


def cell(record: dict[str, Any], key: str, digits: int | None) -> str:
    if key == "ci":  # the CLI's text, one-sided bounds included
        from eloledger.rating.table import interval_text

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


def export_records(data: EloData, fmt_name: str) -> str:
    """CSV or Markdown through the CLI's renderer (same cells as ``eloledger elo``)."""
    from eloledger.tables import Column, render

    keys = [k for k, _, _ in COLUMNS if k != "ci"] + [
        "ci_low",
        "ci_high",
        "elo_per_decade",
        "dominated",
        "pass_k",
    ]
    digits = {k: d for k, _, d in COLUMNS}
    if fmt_name == "csv":
        columns = [
            Column(k, k, 2 if k in ("elo", "ci_low", "ci_high") else digits.get(k)) for k in keys
        ]
        return render("csv", data.players, columns) + "\n"
    records = [dict(p, ci=cell(p, "ci", None)) for p in data.players]
    columns = [Column(k, t, d) for k, t, d in COLUMNS]
    note = f"\n\n_anchor: {data.anchor} = 1000 Elo; source: {data.source}_\n"
    return render("md", records, columns) + note


class LogTokensFormatter(AxisFormatter):
    """x holds log10(tokens); ticks at 1-2-5 steps of each decade, labelled in tokens."""

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        ticks = []
        for decade in range(math.floor(min_) - 1, math.ceil(max_) + 1):
            for mult in (1, 2, 5):
                t = decade + math.log10(mult)
                if min_ <= t <= max_:
                    ticks.append(t)
        if len(ticks) > max_ticks:
            ticks = [t for t in ticks if abs(t - round(t)) < 1e-9] or ticks[:: len(ticks) // 4]
        return ticks

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        return [fmt.compact(10**t) for t in ticks]


class ThresholdScreen(ModalScreen[float | None]):
    """Ask for the "worth it" marginal Elo per 1K threshold."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Back")]
    DEFAULT_CSS = """
    ThresholdScreen { align: center middle; }
    ThresholdScreen > Vertical { width: 64; max-width: 100%; height: auto;
                                 border: thick $primary; background: $surface; padding: 1 2; }
    ThresholdScreen #threshold-help { height: auto; }
    ThresholdScreen #threshold-error { color: $error; height: auto; }
    """

    def __init__(self, current: float) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "An arm is worth its extra tokens from how many Elo per 1K tokens per task "
                "(marginal)? [b]enter[/b] sets it · [b]escape[/b] back",
                id="threshold-help",
            )
            yield Input(value=f"{self.current:g}", id="threshold-input", compact=True)
            yield Static("", id="threshold-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            value = float(event.value)
            if not math.isfinite(value) or value < 0:
                raise ValueError
        except ValueError:
            self.query_one("#threshold-error", Static).update("give a number ≥ 0, e.g. 50")
            return
        self.dismiss(value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class OpenScreen(ModalScreen[tuple[Path, Path | None] | None]):
    """Ask for a comparisons file and (optionally) its ledger."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Back")]
    DEFAULT_CSS = """
    OpenScreen { align: center middle; }
    OpenScreen > Vertical { width: 80; max-width: 100%; height: auto; border: thick $primary;
                            background: $surface; padding: 1 2; }
    OpenScreen #open-error { color: $error; height: auto; }
    OpenScreen Horizontal { height: auto; align-horizontal: right; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Comparisons file (CSV/JSONL: task_id,winner,loser or task_id,a,b,outcome)")
            yield Input(placeholder="run.comparisons.csv", id="open-comparisons")
            yield Label("Ledger (optional: adds the token columns)")
            yield Input(placeholder="run.ledger.jsonl", id="open-ledger")
            yield Static("", id="open-error")
            with Horizontal():
                yield Button("Open (enter)", id="open-ok", variant="primary")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "open-comparisons":
            self.query_one("#open-ledger", Input).focus()
        else:
            self._finish()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._finish()

    def _finish(self) -> None:
        comps = self.query_one("#open-comparisons", Input).value.strip()
        ledger = self.query_one("#open-ledger", Input).value.strip()
        error = self.query_one("#open-error", Static)
        if not comps or not Path(comps).expanduser().is_file():
            error.update(f"{comps or '(empty)'}: no such file")
            return
        if ledger and not Path(ledger).expanduser().is_file():
            error.update(f"{ledger}: no such file")
            return
        self.dismiss((Path(comps).expanduser(), Path(ledger).expanduser() if ledger else None))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


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
    EloTab #elo-plot { height: 1fr; min-height: 8; }
    EloTab #elo-legend { height: auto; padding: 0 1; }
    EloTab #elo-empty { padding: 1 2; color: $text-muted; }
    """

    def __init__(self, inputs: tuple[Path, Path | None] | None = None) -> None:
        super().__init__()
        self.inputs = inputs
        self.data: EloData | None = None
        self.threshold = DEFAULT_THRESHOLD
        self.sort_index = 1  # Elo
        self.sort_reverse = True
        self.exported: list[Path] = []
        self.view = "arms"  # or "curves": the budget curves of the ledger's sessions
        self.curves: Any = None
        self.verdict: dict[str, Any] | None = None
        self.reference = 0  # which arm's best-of-k reference the curves view draws
        self.verdict_shown = False  # the fairness line takes a row only when it has something

    def compose(self) -> ComposeResult:
        yield Static(
            "No Elo table yet.\n\n• [b]o[/b] open a comparisons file (+ its ledger)\n"
            "• [b]e[/b] the example shipped with eloledger (best-of-k arms)\n"
            "• a run started here (ctrl+r: the demo) fills this tab when it ends",
            id="elo-empty",
        )
        yield Static("", id="elo-status")
        yield Static("", id="elo-usage")
        table: DataTable = DataTable(
            id="elo-table", cursor_type="row", zebra_stripes=True, fixed_columns=1
        )
        yield table
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

    def load(self, comparisons: Path, ledger: Path | None = None) -> None:
        self.query_one("#elo-empty", Static).update(f"Fitting {comparisons.name} …")
        self._compute(comparisons, ledger)

    @work(thread=True, exclusive=True, group="elo")
    def _compute(self, comparisons: Path, ledger: Path | None) -> None:
        try:
            data = compute_elo(comparisons, ledger)
        except Exception as exc:
            from eloledger.tui.app import _message

            self.app.call_from_thread(self._failed, _message(exc))
            return
        self.app.call_from_thread(self.set_data, data)

    def _failed(self, message: str) -> None:
        self.query_one("#elo-empty", Static).update(f"Could not build the Elo table:\n{message}")
        self.notify(message, title="Elo", severity="error", timeout=10)

    def set_data(self, data: EloData) -> None:
        self.data = data
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
        for warning in data.warnings[:3]:
            self.notify(warning, title="Elo warning", severity="warning", timeout=8)

    # -- drawing --------------------------------------------------------------------------------

    def sorted_players(self) -> list[dict[str, Any]]:
        assert self.data is not None
        key = COLUMNS[self.sort_index][0]
        present = [p for p in self.data.players if sort_value(p, key)[0] == 0]
        missing = [p for p in self.data.players if sort_value(p, key)[0] == 1]
        present.sort(key=lambda p: sort_value(p, key)[1], reverse=self.sort_reverse)
        return present + missing

    def refresh_table(self) -> None:
        if self.data is None:
            return
        table = self.query_one("#elo-table", DataTable)
        table.clear(columns=True)
        arrow = "↓" if self.sort_reverse else "↑"
        for index, (key, title, _) in enumerate(COLUMNS):
            label = f"{title}{arrow}" if index == self.sort_index else title
            table.add_column(label, key=key)
        knee_name = knee(self.data.players, self.threshold) if self.data.has_costs else None
        letters = self.plot_letters()
        for p in self.sorted_players():
            style = ""
            marginal = p.get("marginal_elo_per_1k")
            if p["name"] == knee_name:
                style = "bold reverse"
            elif p.get("dominated"):
                style = "dim"
            elif _finite(marginal) and marginal < self.threshold:
                style = "italic"
            cells = [
                Text(cell(p, k, d), style=style, justify="left" if k == "name" else "right")
                for k, _, d in COLUMNS
            ]
            if p["name"] in letters:
                cells[0] = Text.assemble((letters[p["name"]] + " ", "bold yellow"), cells[0])
            table.add_row(*cells, key=p["name"])
        status = f"{self.data.source} · anchor {self.data.anchor} = 1000 Elo"
        if self.data.has_costs:
            status += f" · knee: {knee_name or '-'}"
        else:
            status += " · no ledger: token columns empty"
        self.query_one("#elo-status", Static).update(fmt.markup(status))
        self.query_one("#elo-rows", Static).update(
            f"rows: [reverse]knee[/] · [i]italic[/]: marg. < {self.threshold:g} Elo/1K (t)"
            " · [dim]dim[/]: dominated · → more columns"
        )

    def plotted(self) -> list[dict[str, Any]]:
        """The arms with a token cost and an Elo, cheapest first (the points on the plot)."""
        assert self.data is not None
        pts = [
            p
            for p in self.data.players
            if _finite(p.get("tokens_per_task"))
            and p["tokens_per_task"] > 0
            and _finite(p.get("elo"))
        ]
        return sorted(pts, key=lambda p: p["tokens_per_task"])

    def plot_letters(self) -> dict[str, str]:
        return arm_letters([p["name"] for p in self.plotted()])

    def refresh_plot(self) -> None:
        if self.data is None:
            return
        plot = self.query_one("#elo-plot", PlotWidget)
        if self.view == "curves" and self.curves is not None:
            from eloledger.tui.budget_views import draw_curves

            legend = draw_curves(plot, self.curves, self.reference)
            self.query_one("#elo-legend", Static).update(legend)
            return
        plot.clear()
        pts = self.plotted()
        if not pts:
            plot.set_xlabel("no token costs: open the run's ledger too (o)")
            self.query_one("#elo-legend", Static).update("")
            return
        plot.set_x_formatter(LogTokensFormatter())
        pts.sort(key=lambda p: p["tokens_per_task"])
        xs = [math.log10(p["tokens_per_task"]) for p in pts]
        ys = [p["elo"] for p in pts]
        frontier = [p for p in pts if not p.get("dominated")]
        plot.plot(
            [math.log10(p["tokens_per_task"]) for p in frontier],
            [p["elo"] for p in frontier],
            line_style="cyan",
            hires_mode=HiResMode.BRAILLE,
        )
        anchor = next((p for p in pts if p["name"] == self.data.anchor), pts[0])
        x0, y0 = math.log10(anchor["tokens_per_task"]), anchor["elo"]
        x1 = max(xs) + 0.05
        plot.plot(
            [x0, x1],
            [y0, y0 + 400 * (x1 - x0)],
            line_style="grey50",
            hires_mode=HiResMode.BRAILLE,
        )
        letters = arm_letters([p["name"] for p in pts])
        knee_name = knee(self.data.players, self.threshold)
        for p, x, y in zip(pts, xs, ys, strict=True):
            style = "bold red" if p["name"] == knee_name else "bold yellow"
            plot.scatter([x], [y], marker=letters[p["name"]], marker_style=style)
        span = max(xs) - min(xs) or 1.0
        plot.set_xlimits(min(xs) - 0.08 * span, max(xs) + 0.08 * span)
        low = min(min(ys), y0)
        high = max(ys)
        reference_top = y0 + 400 * (max(xs) - x0)
        high = max(high, min(reference_top, high + (high - low)))  # show some of the reference
        pad = (high - low) * 0.1 or 50
        plot.set_ylimits(low - pad, high + pad)
        plot.set_xlabel("tokens per task (log)")
        plot.set_ylabel("Elo")
        last = letters[pts[-1]["name"]]
        self.query_one("#elo-legend", Static).update(
            f"x: tokens per task (log) · y: Elo · [b yellow]A–{last}[/]: the arms (table)"
            + (f", [b red]{letters[knee_name]}[/] the knee" if knee_name in letters else "")
            + f"\n[cyan]━[/] frontier  [grey50]━[/] best-of-k from {fmt.markup(anchor['name'])}:"
            " +400 Elo per 10× tokens"
        )

    # -- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("sort_next", "sort_reverse", "threshold", "export"):
            return self.data is not None
        if action in ("toggle_view", "fairness"):
            return self.data is not None and self.data.ledger is not None
        return True

    def action_sort_next(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(COLUMNS)
        self.sort_reverse = COLUMNS[self.sort_index][0] not in (
            "name",
            "tokens_per_task",
            "tokens_per_success",
        )
        self.refresh_table()

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.refresh_table()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        index = [k for k, _, _ in COLUMNS].index(str(event.column_key.value))
        if index == self.sort_index:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_index = index
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
        if self.view == "curves" and self.curves is not None:  # issue 22: e exports the figure
            from eloledger.tui.budget_views import export_figure

            try:
                paths = export_figure(self.curves, Path.cwd())
            except Exception as exc:  # a missing matplotlib, a folder we cannot write
                from eloledger.tui.app import _message

                self.notify(_message(exc), title="Export failed", severity="error", timeout=10)
                return
            self.exported.extend(paths)
            self.notify("Wrote " + ", ".join(map(str, paths)), title="Exported", timeout=6)
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
            from eloledger.tui.app import _message

            self.app.call_from_thread(
                self.notify, _message(exc), title="Budget curves", severity="error", timeout=10
            )
            self.view = "arms"
            self.app.call_from_thread(self.refresh_table)
            return
        self.app.call_from_thread(self._show_curves, curves)

    def _show_curves(self, curves: Any) -> None:
        from eloledger.tui.budget_views import curves_status

        self.curves = curves
        if self.view != "curves":
            return
        self.refresh_plot()
        self.query_one("#elo-status", Static).update(curves_status(curves) + " · v: back")

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
            from eloledger.tui.app import _message

            message = f"[$error]{fmt.markup(_message(exc))}[/]"
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
        if self.data is None:
            return
        suffix = "csv" if fmt_name == "csv" else "md"
        path = Path.cwd() / f"elo-{time.strftime('%Y%m%d-%H%M%S')}.{suffix}"
        n = 1
        while path.exists():
            n += 1
            path = path.with_name(f"elo-{time.strftime('%Y%m%d-%H%M%S')}-{n}.{suffix}")
        try:
            path.write_text(export_records(self.data, fmt_name), encoding="utf-8")
        except OSError as exc:
            self.notify(f"{path}: {exc.strerror}", title="Export failed", severity="error")
            return
        self.exported.append(path)
        self.notify(f"Wrote {path}", title="Exported", timeout=6)

    def commands(self) -> Iterable[SystemCommand]:
        def go(action: str):
            def run() -> None:
                self.app.action_show_tab("elo")
                self.run_action(action)

            return run

        yield SystemCommand("Elo: open comparisons + ledger", "o", go("open"))
        yield SystemCommand("Elo: load the shipped example", "e", go("example"))
        yield SystemCommand(
            "Elo: set the 'worth it' threshold", "t (marginal Elo per 1K)", go("threshold")
        )
        yield SystemCommand("Elo: budget curves (toggle the plot)", "v", go("toggle_view"))
        yield SystemCommand("Elo: budget fairness verdict", "f: old/new × 1/N arms", go("fairness"))
        yield SystemCommand("Elo: export CSV", "c (into the current folder)", go("export('csv')"))
        yield SystemCommand(
            "Elo: export Markdown", "m (into the current folder)", go("export('md')")
        )


def arm_letters(names: Sequence[str]) -> dict[str, str]:
    """One letter per arm for its point on the plot (A, B, ...; named in the legend line)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return {name: alphabet[i % len(alphabet)] for i, name in enumerate(names)}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
