"""Budget curves and the budget-fairness verdict for the Elo tab.

Both call the same core as ``eloledger curve`` / ``eloledger fairness``
(``eloledger.budget.curves.budget_curves`` and ``eloledger.budget.fairness.fairness_verdict``)
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
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select, Static
from textual_plot import HiResMode, PlotWidget

from eloledger.tui import fmt
from eloledger.tui.dialogs import EnterSubmits

CURVE_BOOTSTRAP = 200
FAIRNESS_BOOTSTRAP = 2000  # the default of `eloledger fairness` and fairness_verdict
COLOURS = ("cyan", "yellow", "magenta", "green", "red", "blue", "white")
ROLES = ("old_1", "new_1", "old_n", "new_n")


def compute_curves(ledger: Path, *, bootstrap: int = CURVE_BOOTSTRAP, seed: int = 0) -> Any:
    """What ``eloledger curve LEDGER`` computes (the same function)."""
    from eloledger.budget.files import ledger_curves

    return ledger_curves(ledger, bootstrap=bootstrap, seed=seed)


def export_figure(curves: Any, folder: Path) -> list[Path]:
    """``e`` in the curves view: the figure ``eloledger curve --plot`` writes, as SVG and PNG
    (new names, never over an earlier export); UserError when matplotlib is missing."""
    import time

    from eloledger.plots import check_plot_target, write_figure

    stem = f"curves-{time.strftime('%Y%m%d-%H%M%S')}"
    n = 1
    while (folder / f"{stem}.svg").exists() or (folder / f"{stem}.png").exists():
        n += 1
        stem = f"curves-{time.strftime('%Y%m%d-%H%M%S')}-{n}"
    check_plot_target(folder / f"{stem}.svg")
    return [write_figure(curves, folder / f"{stem}.{ext}") for ext in ("svg", "png")]


def _points(arm: Any) -> tuple[Any, Any]:
    """An arm's budgets and its reference line: a checkpoint arm's repeated-sampling line,
    or a sampling arm's best-of-k reference."""
    if hasattr(arm, "budgets"):
        return arm.budgets, arm.line
    return arm.tokens, arm.reference_elo


def compute_fairness(
    ledger: Path, arms: dict[str, str], *, bootstrap: int = FAIRNESS_BOOTSTRAP, seed: int = 0
) -> dict[str, Any]:
    """The record ``eloledger fairness LEDGER --old-1 .. --bootstrap B --seed S`` prints."""
    from eloledger.budget.files import fairness_record

    return fairness_record(ledger, arms, bootstrap=bootstrap, seed=seed)


REFERENCE_MARK = "·"  # the reference line is dotted: tellable from the arms' braille lines
REFERENCE_GAP = 3  # one reference dot every 3 cells: an arm's line under it still shows


def _dotted(xs: list[float], ys: list[float], count: int) -> tuple[Any, Any]:
    """``count`` points spread evenly along a line (linear between its points): a dotted line."""
    import numpy as np

    if len(xs) < 2 or xs[-1] == xs[0] or count < 2:
        return xs, ys
    grid = np.linspace(xs[0], xs[-1], count)
    return grid, np.interp(grid, xs, ys)


def draw_curves(
    plot: PlotWidget,
    curves: Any,
    reference: int = 0,
    letters: dict[str, str] | None = None,
    width: int = 78,
) -> str:
    """Each arm's Elo against its budget (log axis) and ONE arm's best-of-k reference (its own
    empirical best-of-k), so five or more arms stay readable; returns the legend line.

    Without colour (NO_COLOR) every series is still told apart: the reference line is dotted,
    and each arm's letter is drawn after every line, so no later curve paints over it."""
    from eloledger.tables import arm_letters, legend_lines
    from eloledger.tui.elo_plot import LogTokensFormatter

    plot.clear()
    axis = getattr(curves, "axis", "tokens")
    if axis == "tokens":
        plot.set_x_formatter(LogTokensFormatter())
    drawn = [arm for arm in curves.arms if len(_points(arm)[0])]
    if not drawn:
        plot.set_xlabel("no budget curves: the ledger has no scored sessions")
        return ""
    letters = letters or arm_letters(arm.name for arm in curves.arms)
    ref_arm = drawn[reference % len(drawn)]
    budgets, line_elo = _points(ref_arm)
    ref_xs = [math.log10(t) for t in budgets]
    ref_ys = [float(e) for e in line_elo]
    xs_all: list[float] = []
    ys_all: list[float] = list(ref_ys)
    keys: list[tuple[str, str]] = []
    ends: list[tuple[float, float, str, str]] = []
    for index, arm in enumerate(drawn):
        xs = [math.log10(t) for t in _points(arm)[0]]
        ys = [float(e) for e in arm.elo]
        colour = COLOURS[index % len(COLOURS)]
        letter = letters[arm.name]  # the table's letter, at the curve's end: no colour needed
        plot.plot(xs, ys, line_style=colour, hires_mode=HiResMode.BRAILLE)
        ends.append((xs[-1], ys[-1], letter, colour))
        verdict = f" ({arm.verdict})" if getattr(arm, "verdict", None) else ""
        keys.append((letter, f"[b {colour}]{letter}[/] {fmt.markup(arm.name)}{verdict}"))
        xs_all += xs
        ys_all += ys
    # the dotted reference over the arms' lines (a line drawn later would hide its dots), and
    # the arms' letters over everything
    span = (max(xs_all) - min(xs_all)) or 1.0
    cells = max(plot.size.width - 10, 20) * (max(ref_xs) - min(ref_xs)) / (1.1 * span)
    dots = _dotted(ref_xs, ref_ys, int(cells / REFERENCE_GAP) + 1)
    plot.scatter(*dots, marker=REFERENCE_MARK, marker_style="grey42")
    for x, y, letter, colour in ends:
        plot.scatter([x], [y], marker=letter, marker_style=f"bold {colour}")
    plot.set_xlimits(min(xs_all) - 0.05 * span, max(xs_all) + 0.05 * span)
    low, high = min(ys_all), max(ys_all)
    pad = (high - low) * 0.1 or 50
    plot.set_ylimits(low - pad, high + pad)
    plot.set_xlabel(f"session budget, {axis} (log)")
    plot.set_ylabel("Elo")
    what = (  # short enough for one line at 80 columns with the keys after it
        "best of k sessions of"
        if hasattr(ref_arm, "budgets")
        else "best-of-k of its own samples from"
    )
    reference = [
        f"[grey42]{REFERENCE_MARK * 3}[/] {what} {fmt.markup(ref_arm.name)}",
        "(r: next) · x: log · e: export",
    ]
    # every arm whole, on as many lines as it takes, by letter; the reference on its own line
    keys.sort()
    arms = legend_lines([key for _, key in keys], width)
    return "\n".join([*arms, *legend_lines(reference, width, gap=" ")])


def curves_status_parts(curves: Any) -> list[str]:
    """The curves' one-line summary in parts, most useful first (a narrow screen drops the
    last): what is drawn, then each arm's verdict or where it slows down."""
    if hasattr(curves, "axis"):  # a checkpoint fit: each arm's verdict against sampling
        from eloledger.budget.checkpoint_curves import _label

        parts = ["curves inside sessions vs repeated sampling"]
        for arm in curves.arms:
            text = f"{arm.name}: {arm.verdict or '?'}"
            if arm.slows_down_after is not None:
                text += f", slows down after {_label(arm.slows_down_after, curves.axis)}"
            parts.append(fmt.markup(text))
        return parts
    slowing = [
        fmt.markup(f"{arm.name} slows down after {fmt.compact(arm.b_inf)} tok")
        for arm in curves.arms
        if arm.b_inf is not None
    ]
    return ["budget curves", *(slowing or ["no arm falls below the reference"])]


def verdict_text(record: dict[str, Any]) -> str:
    """The verdict, the pass@1 change with its interval, and the inputs that produced them."""
    verdict = str(record.get("verdict", "?"))
    colour = {"real_evolution": "$success", "budget_leakage": "$error"}.get(verdict, "$warning")
    inputs = record.get("inputs", {})
    arms = " ".join(f"{role}={inputs.get(role, '?')}" for role in ROLES)
    lines = [f"[b {colour}]{fmt.markup(verdict)}[/]: {fmt.markup(str(record.get('reason', '')))}"]
    pass1 = record.get("metrics", {}).get("pass1_delta", {})
    if pass1.get("estimate") is not None:
        lines.append(
            f"pass@1 new_1 − old_1: {100 * pass1['estimate']:+.1f} pp"
            + (
                f" (95% CI {100 * pass1['ci_low']:+.1f} to {100 * pass1['ci_high']:+.1f})"
                if pass1.get("ci_low") is not None and pass1.get("ci_high") is not None
                else ""
            )
        )
    lines.append(
        f"[$text-muted]inputs: {fmt.markup(arms)} · {inputs.get('bootstrap', '?')} bootstrap rounds"
        f" · seed {inputs.get('seed', '?')} (= eloledger fairness with these arms)[/]"
    )
    return "\n".join(lines)


def guess_roles(arms: list[str]) -> dict[str, str | None]:
    """An arm named after a role (old_1, new-n, ...) fills it; nothing is guessed from order."""
    found: dict[str, str | None] = {}
    for role in ROLES:
        wanted = {role, role.replace("_", "-"), role.replace("_", "")}
        found[role] = next((a for a in arms if a.lower() in wanted), None)
    return found


class FairnessScreen(EnterSubmits, ModalScreen[dict[str, str] | None]):
    """Pick the four arms of the old/new × 1/N design, then judge.

    Enter on an arm's list opens it and picks from it (it must not judge a half-filled form);
    after a pick the focus moves on to the next arm still to choose, then to Judge, where
    enter judges. An arm in two roles is refused (said at the pick, and Judge does nothing);
    a shown error is re-checked on every pick, so it clears once it is fixed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
        EnterSubmits.ENTER,
    ]
    DEFAULT_CSS = """
    FairnessScreen { align: center middle; }
    FairnessScreen > Vertical { width: 70; max-width: 100%; height: auto; max-height: 100%;
                                border: thick $primary; background: $surface; padding: 0 1; }
    FairnessScreen .fair-row { height: 1; margin-top: 1; }
    FairnessScreen .fair-row Label { width: 22; }
    FairnessScreen .fair-row Select { width: 1fr; }
    FairnessScreen #fair-help { height: auto; color: $text-muted; }
    FairnessScreen Horizontal#fair-buttons { height: auto; align-horizontal: right;
                                             margin-top: 1; }
    FairnessScreen #fair-error { color: $error; height: auto; }
    """

    LABELS = {
        "old_1": "old arm, 1 sample",
        "new_1": "new arm, 1 sample",
        "old_n": "old arm, N samples",
        "new_n": "new arm, N samples",
    }

    def __init__(self, arms: list[str], *, bootstrap: int = FAIRNESS_BOOTSTRAP, seed: int = 0):
        super().__init__()
        self.arms = arms
        self.bootstrap = bootstrap
        self.seed = seed
        self._error = ""  # the error on screen, re-checked on every pick

    def compose(self) -> ComposeResult:
        options = [(a, a) for a in self.arms]
        guesses = guess_roles(self.arms)
        with Vertical():
            yield Static(
                "Budget fairness: is the gain real, or only more tokens/samples?\n"
                f"{self.bootstrap} bootstrap rounds over tasks, seed {self.seed} "
                "(the defaults of eloledger fairness)",
                id="fair-help",
            )
            for role in ROLES:
                with Horizontal(classes="fair-row"):
                    yield Label(self.LABELS[role])
                    yield Select(
                        options,
                        value=guesses[role] or Select.NULL,
                        prompt="choose an arm",
                        id=f"fair-{role}",
                        compact=True,
                    )
            yield Static("", id="fair-error")
            with Horizontal(id="fair-buttons"):
                yield Button("Judge (enter)", id="fair-ok", variant="primary", compact=True)

    def on_mount(self) -> None:
        self._focus_next()

    def _show(self, error: str) -> None:
        self._error = error
        self.query_one("#fair-error", Static).update(error)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter judges from the Judge button only: on a list it opens (or picks from) it."""
        if action == "submit" and isinstance(self.focused, Select):
            return False
        return super().check_action(action, parameters)

    def _values(self) -> dict[str, Any]:
        return {role: self.query_one(f"#fair-{role}", Select).value for role in ROLES}

    def _problem(self) -> str:
        """What stops judging now, or "" when the four arms make a design."""
        values = self._values()
        missing = [self.LABELS[r] for r, v in values.items() if v is Select.NULL]
        if missing:
            return "choose an arm for: " + ", ".join(missing)
        return self._twice(values)

    def _twice(self, values: dict[str, Any]) -> str:
        """One arm in two roles makes no design (its gain over itself is 0): say which."""
        roles: dict[Any, list[str]] = {}
        for role, value in values.items():
            if value is not Select.NULL:
                roles.setdefault(value, []).append(self.LABELS[role])
        for arm, labels in roles.items():
            if len(labels) > 1:
                return (
                    f"{arm} is chosen twice ({' and '.join(labels)}): each role needs its own arm"
                )
        return ""

    def _focus_next(self) -> None:
        """The first arm still to choose, else the Judge button."""
        for role in ROLES:
            select = self.query_one(f"#fair-{role}", Select)
            if select.value is Select.NULL:
                select.focus()
                return
        self.query_one("#fair-ok", Button).focus()

    @on(Select.Changed)
    def _picked(self, event: Select.Changed) -> None:
        # an arm picked twice is said at once; a missing one only once Judge was pressed
        self._show(self._problem() if self._error else self._twice(self._values()))
        if event.select.has_focus and event.value is not Select.NULL:
            self._focus_next()

    @on(Button.Pressed, "#fair-ok")
    def action_submit(self) -> None:
        problem = self._problem()
        self._show(problem)
        if problem:
            return
        self.dismiss({role: str(value) for role, value in self._values().items()})

    def action_cancel(self) -> None:
        self.dismiss(None)
