"""The Elo tab's plot: Elo against tokens per task (log axis), the arms as letters, the cost
frontier and the best-of-k reference from the anchor.

Every series reads without colour (NO_COLOR): the arms are letters, the frontier a braille
line, the reference a dotted line of ``·``, and the legend draws each with its own glyph. The
reference is +400·log10(k) Elo for k times the anchor's tokens. The axes tick at round, even
steps: 1-2-5 steps of each decade of tokens, and 1-2-5×10ⁿ Elo (1000, 1100, 1200 …), never more
ticks than the plot has rows for, so no label lands on another's row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from textual_plot import HiResMode, PlotWidget
from textual_plot.axis_formatter import AxisFormatter

from eloledger.budget.gates import knee  # the CLI's `elo --threshold` knee, one rule
from eloledger.tables import arm_letters, legend_lines
from eloledger.tui import fmt
from eloledger.tui.elo_data import EloData, finite

FRONTIER_GLYPH = "⠤⠤"  # what the braille frontier line looks like, for the legend
REFERENCE_GLYPH = "···"  # the reference is drawn as this dotted line
REFERENCE_MARKER = "·"


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


def even_ticks(low: float, high: float, max_ticks: int) -> list[float]:
    """Multiples of one round step (1, 2 or 5 × 10ⁿ) in [low, high], at most ``max_ticks`` of
    them (at least two when the range holds two)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return []
    wanted = max(2, max_ticks)
    power = math.floor(math.log10((high - low) / wanted))
    for exponent in (power, power + 1, power + 2):
        for mult in (1, 2, 5):
            step = mult * 10.0**exponent
            first = math.ceil(low / step - 1e-9)
            last = math.floor(high / step + 1e-9)
            if last - first + 1 <= wanted:
                return [round(k * step, 10) for k in range(first, last + 1)]
    return [low, high]


class EloAxisFormatter(AxisFormatter):
    """y holds Elo: ``even_ticks``, at most one tick per ``rows_per_tick`` rows of the plot.

    ``rows`` may be a callable: the plot's height is read when the ticks are drawn, once the
    plot is laid out (a plot shown a moment ago may not have its size yet)."""

    def __init__(self, rows: int | Callable[[], int] = 16, rows_per_tick: int = 2) -> None:
        self.rows = rows
        self.rows_per_tick = rows_per_tick

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        rows = self.rows() if callable(self.rows) else self.rows
        return even_ticks(min_, max_, min(max_ticks, rows // self.rows_per_tick))

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        return [f"{t:.0f}" if float(t).is_integer() else f"{t:g}" for t in ticks]


def plotted(data: EloData) -> list[dict[str, Any]]:
    """The arms with a token cost and an Elo, cheapest first (the points on the plot)."""
    pts = [
        p
        for p in data.players
        if finite(p.get("tokens_per_task")) and p["tokens_per_task"] > 0 and finite(p.get("elo"))
    ]
    return sorted(pts, key=lambda p: p["tokens_per_task"])


def draw_arms(
    plot: PlotWidget,
    data: EloData,
    threshold: float,
    letters: dict[str, str] | None = None,
    width: int = 78,
) -> str:
    """Draw the arms view on ``plot``; returns the legend (Rich markup, lines of ``width``).

    ``letters``: the tab's one letter per arm (``tables.arm_letters``), the table's too."""
    plot.clear()
    pts = plotted(data)
    if not pts:
        plot.set_xlabel("no token costs: open the run's ledger too (o)")
        return ""
    plot.set_x_formatter(LogTokensFormatter())
    plot.set_y_formatter(
        EloAxisFormatter(lambda: max(4, plot.size.height - plot.margin_top - plot.margin_bottom))
    )
    xs = [math.log10(p["tokens_per_task"]) for p in pts]
    ys = [p["elo"] for p in pts]
    anchor = next((p for p in pts if p["name"] == data.anchor), pts[0])
    x0, y0 = math.log10(anchor["tokens_per_task"]), anchor["elo"]
    x1 = max(xs) + 0.05
    # the reference first: where the frontier runs along it, the frontier shows
    dots = 480  # a dot per half cell up to 240 columns; fixed, so a draw before layout is final
    ref_x = [x0 + (x1 - x0) * i / dots for i in range(dots + 1)]
    plot.scatter(
        ref_x,
        [y0 + 400 * (x - x0) for x in ref_x],
        marker=REFERENCE_MARKER,
        marker_style="grey50",
    )
    frontier = [p for p in pts if not p.get("dominated")]
    plot.plot(
        [math.log10(p["tokens_per_task"]) for p in frontier],
        [p["elo"] for p in frontier],
        line_style="cyan",
        hires_mode=HiResMode.BRAILLE,
    )
    letters = letters or arm_letters(p["name"] for p in data.players)
    knee_name = knee(data.players, threshold)
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
    axes = [
        "x: tokens per task (log) · y: Elo ·",
        "[b yellow]letters[/]: the arms (table)"
        + (f", [b red]{letters[knee_name]}[/] the knee" if knee_name in letters else ""),
    ]
    lines = [
        f"[cyan]{FRONTIER_GLYPH}[/] frontier",
        f"[grey50]{REFERENCE_GLYPH}[/] best-of-k from {fmt.markup(anchor['name'])}:",
        "+400 Elo per 10× tokens",
    ]
    return "\n".join(legend_lines(axes, width, gap=" ") + legend_lines(lines, width))
