"""Budget curves and the budget-fairness verdict for the Elo tab (issue 7, item 3).

Both call the same core as ``eloledger curve`` / ``eloledger fairness``
(``eloledger.rating.curves.budget_curves`` and ``eloledger.rating.fairness.fairness_verdict``)
on the ledger's rows, in a thread worker started by the Elo tab.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select, Static
from textual_plot import HiResMode, LegendLocation, PlotWidget

from eloledger.tui import fmt

CURVE_BOOTSTRAP = 200
FAIRNESS_BOOTSTRAP = 1000
COLOURS = ("cyan", "yellow", "magenta", "green", "red", "blue", "white")
ROLES = ("old_1", "new_1", "old_n", "new_n")


def ledger_rows(ledger: Path) -> list[dict[str, Any]]:
    from eloledger.ledger.reader import iter_rows

    return list(iter_rows(ledger))


def compute_curves(ledger: Path, *, bootstrap: int = CURVE_BOOTSTRAP, seed: int = 0) -> Any:
    from eloledger.rating.curves import budget_curves

    return budget_curves(ledger_rows(ledger), bootstrap=bootstrap, seed=seed)


def compute_fairness(
    ledger: Path, arms: dict[str, str], *, bootstrap: int = FAIRNESS_BOOTSTRAP, seed: int = 0
) -> dict[str, Any]:
    from eloledger.rating.fairness import fairness_verdict

    return fairness_verdict(
        ledger_rows(ledger),
        arms["old_1"],
        arms["new_1"],
        arms["old_n"],
        arms["new_n"],
        bootstrap=bootstrap,
        seed=seed,
    )


def draw_curves(plot: PlotWidget, curves: Any) -> None:
    """Each arm's Elo against its budget (log axis) and its best-of-k reference (+400/decade)."""
    from eloledger.tui.elo_tab import LogTokensFormatter

    plot.clear()
    plot.set_x_formatter(LogTokensFormatter())
    xs_all: list[float] = []
    ys_all: list[float] = []
    for index, arm in enumerate(curves.arms):
        if not len(arm.tokens):
            continue
        xs = [math.log10(t) for t in arm.tokens]
        ys = [float(e) for e in arm.elo]
        colour = COLOURS[index % len(COLOURS)]
        plot.plot(xs, ys, line_style=colour, label=arm.name, hires_mode=HiResMode.BRAILLE)
        reference = [float(e) for e in arm.reference_elo]
        plot.plot(
            xs,
            reference,
            line_style="grey42",
            label="best-of-k reference" if index == 0 else None,
            hires_mode=HiResMode.BRAILLE,
        )
        xs_all += xs
        ys_all += ys
    if not xs_all:
        plot.set_xlabel("no budget curves: the ledger has no scored sessions")
        return
    span = (max(xs_all) - min(xs_all)) or 1.0
    plot.set_xlimits(min(xs_all) - 0.05 * span, max(xs_all) + 0.05 * span)
    low, high = min(ys_all), max(ys_all)
    pad = (high - low) * 0.1 or 50
    plot.set_ylimits(low - pad, high + pad)
    plot.set_xlabel("session budget, tokens (log) · grey: +400 Elo per 10× tokens")
    plot.set_ylabel("Elo")
    plot.show_legend(LegendLocation.TOPLEFT)


def curves_status(curves: Any) -> str:
    parts = []
    for arm in curves.arms:
        if arm.b_inf is not None:
            parts.append(f"{arm.name} slows down after {fmt.compact(arm.b_inf)} tok")
    text = "budget curves · " + ("; ".join(parts) if parts else "no arm falls below the reference")
    return text


def verdict_text(record: dict[str, Any]) -> str:
    verdict = str(record.get("verdict", "?"))
    colour = {"real_improvement": "$success", "budget_leakage": "$error"}.get(verdict, "$warning")
    return f"[b {colour}]{escape(verdict)}[/]: {escape(str(record.get('reason', '')))}"


class FairnessScreen(ModalScreen[dict[str, str] | None]):
    """Pick the four arms of the old/new × 1/N design."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back")]
    DEFAULT_CSS = """
    FairnessScreen { align: center middle; }
    FairnessScreen > Vertical { width: 70; max-width: 100%; height: auto;
                                border: thick $primary; background: $surface; padding: 0 2; }
    FairnessScreen Horizontal { height: auto; align-horizontal: right; }
    FairnessScreen #fair-error { color: $error; height: auto; }
    """

    LABELS = {
        "old_1": "old arm, 1 sample",
        "new_1": "new arm, 1 sample",
        "old_n": "old arm, N samples",
        "new_n": "new arm, N samples",
    }

    def __init__(self, arms: list[str]) -> None:
        super().__init__()
        self.arms = arms

    def compose(self) -> ComposeResult:
        options = [(a, a) for a in self.arms]
        guesses = dict(zip(ROLES, (self.arms * 4)[:4], strict=True))
        with Vertical():
            yield Label("Budget fairness: is the gain real, or only more tokens/samples?")
            for role in ROLES:
                yield Label(self.LABELS[role])
                yield Select(options, value=guesses[role], allow_blank=False, id=f"fair-{role}")
            yield Static("", id="fair-error")
            with Horizontal():
                yield Button("Judge (enter)", id="fair-ok", variant="primary")

    @on(Button.Pressed, "#fair-ok")
    def _ok(self) -> None:
        chosen = {role: str(self.query_one(f"#fair-{role}", Select).value) for role in ROLES}
        if chosen["old_1"] == chosen["new_1"] or chosen["old_n"] == chosen["new_n"]:
            self.query_one("#fair-error", Static).update("old and new must be different arms")
            return
        self.dismiss(chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
