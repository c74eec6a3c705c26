"""`eloledger curve`: Elo against tokens per arm (budget curves), with the best-of-k reference."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from eloledger.cli.options import add_format_option
from eloledger.cli.warn import warn

EPILOG = """\
examples:
  eloledger curve runs/ledger.jsonl                      # table: Elo at each token budget
  eloledger curve runs/ledger.jsonl --format json > curves.json
  eloledger curve runs/ledger.jsonl --grid 2 --bootstrap 500 --seed 7 --format csv
  eloledger curve runs/ledger.jsonl --plot curves.svg     # the figure too (.svg or .png)
  eloledger curve runs/agents.jsonl --axis cost           # checkpoint rows: x = prices.toml cost
  eloledger curve runs/ledger.jsonl --split test --tag hard  # only those rows (--tasks FILE
                                                         # labels rows that lack split/tags)

inside agent sessions (used automatically when the ledger has checkpoint rows):
  every (arm, budget) of the agents' judged checkpoints -- and of chat arms' calls -- is a
  player in ONE Bradley-Terry fit with task-clustered (sandwich) intervals; budgets on each
  arm's 1.5x grid (--grid). Against it, the arm's repeated-sampling line: the best of
  k = floor(budget / s0) of its own independent sessions cut at its first budget b0, s0 being
  what such a session spends. Each session meets the best of k OTHER sessions of its task
  head to head (exact counting, ties half: the data's own ties), so gap = the Elo of that win
  rate, its interval a t interval over tasks (the line's own noise included); a budget needs
  k + 1 sessions on >= 5 tasks (else the +400*log10 k law, marked 'law', no interval). verdict:
  above / on / below sampling again at the last tested budget, or "too few sessions";
  'slows down after': the last budget before the curve stays clearly under the line.
  --axis tokens | cost | seconds chooses the budget (cost from prices.toml).

method ("When Agents Slow Down", 2026):
  each session (ledger field 'session', else each task/arm sample sequence) is cut at
  budgets on a geometric token grid (--grid ratio); its best score so far at each budget
  is a player arm@budget; all players meet within each task (higher score wins, ties split,
  no score yet loses); one Bradley-Terry fit, anchored at 1000 on the cheapest arm's first
  point; 95% intervals by resampling tasks (--resample). Grid points inside one call are
  merged; each arm's curve stops at its sessions' common length (the shortest session).

reading it:
  slope/decade   Elo gained per tenfold tokens since the previous point
  samples        samples a typical session had completed at that budget
  reference      the arm's own empirical best-of-k: what the best of that many of its samples
                 gains over one (exact subsampling of its samples per task, same fit); it is
                 400*log10(k) only for continuous, tie-free scores -- pass/fail tasks reach
                 far less, so an ideal sampler lies on its own reference, not on +400/decade
  b_inf          the budget after which the arm stays clearly below its reference (its upper
                 95% bound too): more tokens no longer buy what fresh samples would
  splitting      m sessions of B/m tokens versus one session of B tokens, same arm
"""

COLUMNS = (
    ("arm", "arm", None),
    ("tokens", "tokens", 0),
    ("samples", "samples", 0),
    ("elo", "elo", 1),
    ("ci", "95% CI", None),
    ("reference_elo", "reference", 1),
    ("slope_per_decade", "slope/decade", 0),
    ("b_inf", "b_inf", None),
)
SPLIT_COLUMNS = (
    ("arm", "arm", None),
    ("budget", "B", 0),
    ("m", "m", None),
    ("single_elo", "1 x B", 1),
    ("split_elo", "m x B/m", 1),
    ("delta", "delta", 1),
    ("delta_ci", "95% CI", None),
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "curve",
        help="budget curves: Elo against tokens per arm, with the 400 Elo/decade reference",
        description=(
            "Cut every session of a ledger at a geometric grid of token budgets, rate each "
            "arm@budget with one pooled Bradley-Terry fit, and show where each arm's Elo per "
            "tenfold tokens falls below the best-of-k reference (400 Elo per decade)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "ledger",
        metavar="LEDGER",
        nargs="+",
        help="token ledger (JSONL) with scored rows; several files, a glob or a folder merge",
    )
    parser.add_argument(
        "--grid", type=float, default=1.5, metavar="RATIO", help="budget grid ratio (default 1.5)"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=200,
        metavar="N",
        help="bootstrap rounds for the 95%% intervals (default 200; 0 = none)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="bootstrap seed (default 0)"
    )
    parser.add_argument(
        "--resample",
        choices=("sessions", "tasks", "both"),
        default="tasks",
        help="what the bootstrap resamples (default: tasks, like `elo`: intervals that cover "
        "the population of tasks; sessions = the tasks held fixed, both = tasks then sessions)",
    )
    add_format_option(parser, ("table", "json", "csv"))
    parser.add_argument(
        "--axis",
        choices=("tokens", "cost", "seconds"),
        default="tokens",
        help="budget axis (default tokens; cost uses prices.toml; cost and seconds use the "
        "checkpoint method, which also rates chat arms)",
    )
    parser.add_argument(
        "--plot",
        metavar="FILE",
        help="also write the figure: FILE.svg or FILE.png (needs the 'plot' extra: matplotlib)",
    )
    from eloledger.cli.options import add_selection_args

    add_selection_args(parser)  # --split/--tag/--tasks, as tokens, elo and fairness have
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.budget.files import ledger_curves
    from eloledger.tables import to_json

    plot = getattr(args, "plot", None)
    if plot:
        from eloledger.plots import check_plot_target

        check_plot_target(plot)
    result = ledger_curves(
        args.ledger,
        axis=getattr(args, "axis", "tokens"),
        grid=args.grid,
        bootstrap=args.bootstrap,
        seed=args.seed,
        resample=args.resample,
        prices=getattr(args, "prices", None),  # the demo's prices for the sim's models
        split=getattr(args, "split", None),
        tags=getattr(args, "tag", None) or (),
        tasks=getattr(args, "tasks", None),
    )
    if plot:
        from eloledger.plots import write_figure

        write_figure(result, plot)
    if args.format == "json":
        print(to_json(result.to_dict()))
        return 0
    for warning in result.warnings:
        warn(warning)
    print(render(result, args.format))
    if plot:
        print(f"figure written to {plot}", file=sys.stderr)
    return 0


def point_records(result: Any) -> list[dict[str, Any]]:
    """One record per (arm, budget) point: what the table and the CSV show."""
    records = []
    for arm in result.arms:
        for k, tokens in enumerate(arm.tokens):
            records.append(
                {
                    "arm": arm.name,
                    "tokens": float(tokens),
                    "samples": None if arm.samples is None else float(arm.samples[k]),
                    "elo": float(arm.elo[k]),
                    "ci_low": float(arm.ci_low[k]),
                    "ci_high": float(arm.ci_high[k]),
                    "ci": _interval(arm.ci_low[k], arm.ci_high[k]),
                    "reference_elo": float(arm.reference_elo[k]),
                    "slope_per_decade": float(arm.slope_per_decade[k - 1]) if k else None,
                    "b_inf": "b_inf" if arm.b_inf is not None and tokens == arm.b_inf else None,
                }
            )
    return records


CHECKPOINT_COLUMNS = (
    ("arm", "arm", None),
    ("budget", "budget", None),
    ("elo", "elo", 1),
    ("ci", "95% CI", None),
    ("line", "line", 1),
    ("slope_per_decade", "slope/decade", 0),
    ("verdict", "verdict", None),
)
ARM_COLUMNS = (  # fits 80 columns with a 15-character arm name (kind: in the JSON)
    ("arm", "arm", None),
    ("verdict", "verdict", None),
    ("gap", "gap", 0),
    ("gap_ci", "95% CI", None),
    ("slows", "slows", None),
    ("accuracy", "acc", 3),
    ("per_dollar", "acc/$", 2),
    ("per_call", "acc/call", 4),
)


def checkpoint_records(result: Any) -> list[dict[str, Any]]:
    """One record per (arm, budget): the table's and the CSV's rows for a checkpoint fit."""
    from eloledger.budget.checkpoint_curves import _label

    out = []
    for arm in result.arms:
        at = arm.verdict_index()
        for k, budget in enumerate(arm.budgets):
            out.append(
                {
                    "arm": arm.name,
                    "budget": _label(budget, result.axis),
                    "budget_value": float(budget),
                    "elo": float(arm.elo[k]),
                    "ci_low": float(arm.ci_low[k]),
                    "ci_high": float(arm.ci_high[k]),
                    "ci": _interval(arm.ci_low[k], arm.ci_high[k]),
                    "line": float(arm.line[k]),
                    "line_kind": arm.line_kind[k],
                    "slope_per_decade": round(float(arm.slope[k - 1]), 6) + 0.0 if k else None,
                    "verdict": arm.verdict if k == at else None,
                }
            )
    return out


def _render_checkpoints(result: Any, fmt: str) -> str:
    from eloledger.budget.checkpoint_curves import _label
    from eloledger.tables import Column, render_csv, render_table, terminal_width, wrap

    records = checkpoint_records(result)
    if fmt == "csv":
        keys = ("arm", "budget_value", "elo", "ci_low", "ci_high", "line", "line_kind",
                "slope_per_decade", "verdict")  # fmt: skip
        return render_csv(records, [Column(k, k, None) for k in keys])
    width = terminal_width()
    parts = [render_table(records, [Column(*c) for c in CHECKPOINT_COLUMNS], width=width)]
    arms = []
    for arm in result.arms:
        d = arm.to_dict()
        arms.append(
            {
                "arm": arm.name,
                "kind": arm.kind,
                "verdict": arm.verdict or "",
                "gap": d["verdict_gap"],
                "gap_ci": _interval(*(d["verdict_ci"] or (None, None))),
                "slows": "" if arm.slows_down_after is None
                else _label(arm.slows_down_after, result.axis),
                "accuracy": arm.accuracy,
                "per_dollar": arm.accuracy_per_dollar,
                "per_call": arm.accuracy_per_call,
            }
        )  # fmt: skip
    parts.append("\n" + wrap("against repeated sampling (verdict at each arm's last tested budget; "
                              "slows: after it, the curve stays under its line):", width))  # fmt: skip
    parts.append(render_table(arms, [Column(*c) for c in ARM_COLUMNS], width=width))
    parts.append(
        wrap(
            f"line: best of k = floor(budget / s0) of the arm's own sessions cut at its first "
            f"budget, s0 = what one such session spends, met head to head within each task; "
            f"anchor: {result.anchor} = 1000 Elo; intervals: task-clustered sandwich (gaps: t "
            f"over tasks); axis: {result.axis}",
            width,
        )
    )
    if any(arm.accuracy_basis == "median" for arm in result.arms):
        parts.append(wrap("acc (scored tasks): share of an arm's sessions whose final score is "
                          "at or above the task's median over all arms' sessions", width))  # fmt: skip
    if any(arm.cost_per_session is None for arm in result.arms):
        parts.append(wrap("acc/$: blank where prices.toml has no price for the model", width))
    for arm in result.arms:
        if arm.verdict_note and not result.intervals_note:
            parts.append(wrap(f"{arm.name}: {arm.verdict_note}", width))
    if result.intervals_note:
        parts.append(wrap(f"note: {result.intervals_note}", width))
    return "\n".join(parts)


def render(result: Any, fmt: str) -> str:
    from eloledger.tables import Column, render_csv, render_table, terminal_width, wrap

    if hasattr(result, "axis"):  # a checkpoint fit
        return _render_checkpoints(result, fmt)
    records = point_records(result)
    width = terminal_width()
    if fmt == "csv":
        keys = ("arm", "tokens", "elo", "ci_low", "ci_high", "reference_elo", "slope_per_decade")
        return render_csv(records, [Column(k, k, None) for k in keys])
    columns = [Column(key, title, digits) for key, title, digits in COLUMNS]
    parts = [render_table(records, columns, width=width)]
    summary = ", ".join(
        f"{a.name}: {'never' if a.b_inf is None else f'{a.b_inf:g} tokens'}" for a in result.arms
    )
    parts.append(
        "\n" + wrap(f"b_inf (stays below its own best-of-k reference from): {summary}", width)
    )
    parts.append(
        wrap(
            f"anchor: {result.anchor} = 1000 Elo; intervals: {result.bootstrap} rounds "
            f"resampling {result.resample}",
            width,
        )
    )
    if result.splitting:
        split_records = [
            {**s.to_dict(), "delta_ci": _interval(s.delta_ci_low, s.delta_ci_high)}
            for s in result.splitting
        ]
        split_columns = [Column(key, title, digits) for key, title, digits in SPLIT_COLUMNS]
        parts.append("\nbudget splitting (m sessions of B/m tokens vs one session of B):")
        parts.append(render_table(split_records, split_columns, width=width))
    return "\n".join(parts)


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None or low != low or high != high:
        return ""
    return f"[{low:.0f}, {high:.0f}]"
