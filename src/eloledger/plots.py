"""Figures for a report: budget curves and the diminishing-returns plot as SVG or PNG.

``eloledger curve --plot FILE``, ``eloledger elo --plot FILE`` and the TUI's curves export all
call :func:`write_figure`, so the file is the same whichever face made it. matplotlib is an
optional extra (``pip install 'eloledger[plot]'``); without it the caller gets a one-line
error. Figures are built on a bare ``matplotlib.figure.Figure`` (no pyplot: no global state, safe
in the TUI's worker thread) and are readable in print and in greyscale: every arm has its own
marker and dash pattern as well as its colour, the repeated-sampling / best-of-k reference is a
dotted line with hollow markers of the arm's marker, intervals are error bars. SVG text stays
text (``svg.fonttype = none``) and each series is a group with an id (``series-ARM``,
``line-ARM``), so a report can restyle it and tests can find it; the SVG carries no date, so
the same input gives the same file.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from eloledger.errors import UserError

FORMATS = {".svg": "svg", ".png": "png"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")
DASHES = ("-", "--", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (3, 1, 1, 1)))
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
INSTALL = "pip install 'eloledger[plot]' (matplotlib)"


def plot_format(path: str | os.PathLike[str]) -> str:
    """``svg`` or ``png`` from the file's extension; a one-line error for anything else."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UserError(
            f"--plot {path}: unknown figure format {Path(path).suffix or '(none)'!r}",
            fix="name the file .svg or .png",
        )
    return fmt


def check_plot_target(path: str | os.PathLike[str]) -> None:
    """Fail before any work: a bad extension, or matplotlib missing (one-line error, exit 2)."""
    plot_format(path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError("--plot needs matplotlib, which is not installed", fix=INSTALL) from None


def _figure(width: float = 9.5, height: float = 4.8) -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise UserError("--plot needs matplotlib, which is not installed", fix=INSTALL) from None
    # text stays text (searchable, restylable); fixed ids and no date: the same input gives
    # the same bytes
    matplotlib.rcParams.update(
        {"svg.fonttype": "none", "svg.hashsalt": "eloledger", "svg.id": "eloledger-figure",
         "font.size": 9}
    )  # fmt: skip
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _legend_outside(ax: Any, **kwargs: Any) -> Any:
    """The legend right of the axes, never over the data (constrained layout makes room)."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=7, frameon=True, **kwargs)  # fmt: skip


def _style(index: int) -> dict[str, Any]:
    return {
        "color": COLOURS[index % len(COLOURS)],
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": DASHES[index % len(DASHES)],
    }


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    fmt = plot_format(path)
    out = Path(path)
    try:
        if fmt == "svg":
            fig.savefig(out, format="svg", metadata={"Date": None})
        else:
            fig.savefig(out, format="png", dpi=150, metadata={"Software": None})
    except OSError as exc:
        raise UserError(
            f"--plot {path}: cannot write the figure ({exc.strerror})",
            fix="choose a folder you can write to",
        ) from None
    return out


def _errors(values: Any, low: Any, high: Any) -> list[list[float]] | None:
    """matplotlib's asymmetric error bars; None when there is no finite interval."""
    lows = [v - lo if math.isfinite(lo) else 0.0 for v, lo in zip(values, low, strict=True)]
    highs = [hi - v if math.isfinite(hi) else 0.0 for v, hi in zip(values, high, strict=True)]
    return [lows, highs] if any(lows) or any(highs) else None


def plot_checkpoints(result: Any, path: str | os.PathLike[str]) -> Path:
    """Elo of every (arm, budget) of a checkpoint fit against log budget, each arm's
    repeated-sampling line beside it, and the verdict in the legend."""
    from eloledger.budget.checkpoint_curves import AXIS_LABEL
    from eloledger.tables import arm_letters

    letters = arm_letters(arm.name for arm in result.arms)  # the TUI's letters
    fig, ax = _figure()
    handles: list[Any] = []
    for n, arm in enumerate(result.arms):
        style = _style(n)
        bars = _errors(arm.elo, arm.ci_low, arm.ci_high)
        verdict = f" ({arm.verdict} sampling)" if arm.verdict else ""
        drawn = ax.errorbar(
            arm.budgets, arm.elo, yerr=bars, capsize=2.5, linewidth=1.6, markersize=5,
            label=f"{letters[arm.name]} {arm.name} [{arm.kind}]{verdict}", **style,
        )  # fmt: skip
        drawn[0].set_gid(f"series-{arm.name}")
        law = [k == "law" for k in arm.line_kind]
        (line,) = ax.plot(
            arm.budgets, arm.line, linestyle=":", marker=style["marker"], markersize=4,
            markerfacecolor="white", color=style["color"], linewidth=1.1,
            label=f"{arm.name}: best of k sessions" + (" (+400·log10 k past data)" if any(law) else ""),
        )  # fmt: skip
        line.set_gid(f"line-{arm.name}")
        handles += [drawn, line]
        if arm.slows_down_after is not None:
            mark = ax.axvline(
                arm.slows_down_after, color=style["color"], linewidth=0.8, linestyle=(0, (2, 2)),
                label=f"{arm.name} slows down after",
            )  # fmt: skip
            mark.set_gid(f"slows-{arm.name}")
            handles.append(mark)
    ax.set_xscale("log")
    ax.set_xlabel(AXIS_LABEL.get(result.axis, result.axis) + " (log scale)")
    ax.set_ylabel(f"Elo (anchor {result.anchor} = 1000; bars: {result.level:.0%} interval)")
    ax.set_title("Budget curves inside sessions against repeated sampling")
    ax.grid(True, which="both", linewidth=0.3, color="#bbbbbb")
    _legend_outside(ax, handles=handles)
    return _save(fig, path)


def plot_curves(result: Any, path: str | os.PathLike[str]) -> Path:
    """The sampling budget curves (:mod:`eloledger.budget.curves`) with each arm's best-of-k
    reference and b_inf."""
    from eloledger.tables import arm_letters

    letters = arm_letters(arm.name for arm in result.arms)  # the TUI's letters
    fig, ax = _figure()
    for n, arm in enumerate(result.arms):
        if not len(arm.tokens):
            continue
        style = _style(n)
        drawn = ax.errorbar(
            arm.tokens, arm.elo, yerr=_errors(arm.elo, arm.ci_low, arm.ci_high), capsize=2.5,
            linewidth=1.6, markersize=5, label=f"{letters[arm.name]} {arm.name}", **style,
        )  # fmt: skip
        drawn[0].set_gid(f"series-{arm.name}")
        (line,) = ax.plot(
            arm.tokens, arm.reference_elo, linestyle=":", marker=style["marker"], markersize=4,
            markerfacecolor="white", color=style["color"], linewidth=1.1,
            label=f"{arm.name}: best-of-k reference ({arm.reference_kind})",
        )  # fmt: skip
        line.set_gid(f"line-{arm.name}")
        if arm.b_inf is not None:
            ax.axvline(arm.b_inf, color=style["color"], linewidth=0.6, linestyle="--")
    ax.set_xscale("log")
    ax.set_xlabel("session budget, tokens (log scale)")
    ax.set_ylabel(f"Elo (anchor {result.anchor} = 1000; bars: 95% interval)")
    ax.set_title("Budget curves: Elo against tokens, with each arm's best-of-k reference")
    ax.grid(True, which="both", linewidth=0.3, color="#bbbbbb")
    _legend_outside(ax)
    return _save(fig, path)


def plot_elo(report: Any, path: str | os.PathLike[str]) -> Path:
    """The diminishing-returns plot: Elo against tokens per task (log) when the report has
    costs, the Pareto frontier joined; else each player's Elo with its interval."""
    players = [p for p in report.players if p.get("elo") is not None]
    if not players:
        raise UserError("--plot: no rated player to draw", fix="rate at least two players")
    costed = [p for p in players if p.get("tokens_per_task")]
    level = f"{report.level:.0%} interval"
    fig, ax = _figure()
    if costed:
        _draw_costed(ax, report, costed)
    else:
        ordered = sorted(players, key=lambda p: p["elo"])
        ys = list(range(len(ordered)))
        drawn = ax.errorbar(
            [p["elo"] for p in ordered], ys,
            xerr=_errors([p["elo"] for p in ordered], [p["ci_low"] for p in ordered],
                         [p["ci_high"] for p in ordered]),
            marker="o", linestyle="none", color=COLOURS[0], capsize=3, label=f"Elo, {level}",
        )  # fmt: skip
        drawn[0].set_gid("series-elo")
        ax.set_yticks(ys, [str(p["name"]) for p in ordered])
        ax.set_xlabel(f"Elo (anchor {report.anchor} = 1000)")
        ax.set_ylabel("player")
        ax.set_title("Bradley-Terry Elo with intervals")
        _legend_outside(ax)
    if costed:
        ax.set_ylabel(f"Elo (anchor {report.anchor} = 1000; bars: {level})")
    ax.grid(True, which="both", linewidth=0.3, color="#bbbbbb")
    return _save(fig, path)


def _draw_costed(ax: Any, report: Any, costed: list[dict[str, Any]]) -> None:
    """What the TUI's Elo plot draws: each arm by its letter (``tables.arm_letters``, the
    table's), the frontier, and the best-of-k reference from the anchor (+400 Elo per 10×
    tokens, the line an arm that only samples more would follow)."""
    from eloledger.tables import arm_letters

    letters = arm_letters(p["name"] for p in report.players)
    ordered = sorted(costed, key=lambda p: p["tokens_per_task"])
    for n, p in enumerate(ordered):
        style = _style(n)
        style.pop("linestyle")
        x, y = p["tokens_per_task"], p["elo"]
        drawn = ax.errorbar(
            [x], [y], yerr=_errors([y], [p["ci_low"]], [p["ci_high"]]),
            capsize=3, markersize=6, linestyle="none", label=f"{letters[p['name']]} {p['name']}",
            **style,
        )  # fmt: skip
        drawn[0].set_gid(f"series-{p['name']}")
        ax.annotate(letters[p["name"]], (x, y), xytext=(5, 4), textcoords="offset points",
                    fontsize=8, fontweight="bold", color=style["color"])  # fmt: skip
    front = [p for p in ordered if not p.get("dominated")]
    if len(front) > 1:
        (line,) = ax.plot(
            [p["tokens_per_task"] for p in front], [p["elo"] for p in front],
            color="#555555", linestyle="--", linewidth=1.0, label="frontier (not dominated)",
        )  # fmt: skip
        line.set_gid("line-frontier")
    anchor = next((p for p in ordered if p["name"] == report.anchor), ordered[0])
    x0, y0 = anchor["tokens_per_task"], anchor["elo"]
    top = max(p["tokens_per_task"] for p in ordered) * 10**0.05
    xs = [x0 * (top / x0) ** (i / 64) for i in range(65)]
    (reference,) = ax.plot(
        xs, [y0 + 400 * math.log10(x / x0) for x in xs], color="#888888", linestyle=":",
        linewidth=1.2, label=f"best-of-k from {anchor['name']}: +400 Elo per 10× tokens",
    )  # fmt: skip
    reference.set_gid("line-reference")
    bars = [p["elo"] for p in ordered] + [
        v for p in ordered for v in (p.get("ci_low"), p.get("ci_high"))
        if isinstance(v, (int, float)) and math.isfinite(v)
    ]  # fmt: skip
    low, high = min(min(bars), y0), max(bars)
    reference_top = y0 + 400 * math.log10(max(p["tokens_per_task"] for p in ordered) / x0)
    high = max(high, min(reference_top, high + (high - low)))  # some of the reference, as TUI
    pad = (high - low) * 0.1 or 50
    ax.set_ylim(low - pad, high + pad)
    ax.set_xscale("log")
    ax.set_xlabel("tokens per task (log scale)")
    ax.set_title("Diminishing returns: Elo against tokens per task")
    handles, labels = ax.get_legend_handles_labels()
    arms = sorted(i for i, label in enumerate(labels) if label.split(" ", 1)[0] in letters.values())
    arms.sort(key=lambda i: labels[i])  # by letter, as the TUI's table and legend
    lines = [i for i in range(len(labels)) if i not in arms]
    _legend_outside(ax, handles=[handles[i] for i in arms + lines],
                    labels=[labels[i] for i in arms + lines])  # fmt: skip


def write_figure(result: Any, path: str | os.PathLike[str]) -> Path:
    """The right figure for a checkpoint fit, budget curves or an Elo report."""
    from eloledger.budget.checkpoint_curves import CheckpointResult
    from eloledger.budget.curves import CurveResult

    plot_format(path)  # a bad name fails before any work
    if isinstance(result, CheckpointResult):
        return plot_checkpoints(result, path)
    if isinstance(result, CurveResult):
        return plot_curves(result, path)
    return plot_elo(result, path)
