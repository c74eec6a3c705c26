"""`eloledger elo`: Bradley–Terry Elo with intervals by task, Elo-per-token columns and an
optional length-controlled Elo."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from eloledger.cli.options import (
    FORMATS,
    INTERVALS,
    add_format_option,
    add_wide_option,
    interval_method,
)
from eloledger.cli.warn import warn
from eloledger.errors import UserError
from eloledger.report.elo_columns import cost_columns, elo_columns, shown_record
from eloledger.report.elo_files import (
    DEFAULT_ROUNDS,
    DEFAULT_ROUNDS_MANY,
    MANY_PLAYERS,
    csv_text,
)

EPILOG = """\
examples:
  eloledger elo --example                      # the best-of-k example shipped with eloledger
  eloledger elo comparisons.csv                # Elo, 95% interval (task-clustered sandwich)
  eloledger elo comparisons.csv --intervals bootstrap   # exact task bootstrap (1000 rounds)
  eloledger elo comparisons.csv --length-control        # + Elo at equal answer length
  eloledger elo comparisons.csv --ledger runs/ledger.jsonl --format md > elo.md
  eloledger elo comparisons.jsonl --anchor best_of_1 --bootstrap 2000 --seed 7 --format json
  eloledger elo comparisons.csv --task-weight equal --prior 0.05 --format csv

comparisons file (CSV or JSONL, optionally .gz):
  task_id,winner,loser[,weight]    or    task_id,a,b,outcome[,weight]
  outcome is a's share of the win: 1, 0, 0.5 (tie) or any value in [0, 1].
  optional a_tokens,b_tokens: output tokens of the first / second player's answer
  (winner / loser in the first shape); empty = unknown. Needed by --length-control.

intervals (95%, relative to the anchor, by task):
  sandwich      default: cluster-robust covariance over tasks at the fit (about one more fit)
  bootstrap     exact task bootstrap: --bootstrap N rounds refitted (slower)
  none          no intervals

--length-control fits P(a beats b) = σ(θa − θb + β·tanh(Δ/s)), Δ = ln a_tokens − ln b_tokens,
  s = RMS(Δ): lc_elo is each player's Elo at equal length, length_coef = β in Elo points,
  the length-outcome association (not by itself a judge bias: if better answers are
  longer, β > 0 and lc_elo removes part of a real gap). Its intervals are the sandwich.

columns with --ledger (tokens are task-normalised: mean over tasks of each task's total):
  d_elo/1k      Elo gained over the anchor per 1,000 extra tokens per task
  marg/1k       marginal Elo per 1K tokens: arms sorted by tokens, consecutive steps on the
                upper convex hull of (tokens, Elo); 'dominated' arms are below that hull
  frontier      share of the interval draws in which the arm is on that hull (dominated
                is the point estimate's reading; JSON/CSV also give d_elo/1k and marg/1k
                intervals, task-clustered, tokens held at their measured values)
  elo/decade    Elo gained over the anchor per tenfold tokens (best-of-k reference: 400)
  raw/1k*       Elo / (tokens/1000), the ratio popular guides print; it depends on the
                arbitrary 1000 anchor, so do not rank arms by it
  pass@1        share of sessions whose submitted answer passes (the run's results file
                beside the ledger says which sample each arm submitted)
  acc/sample    share of scored samples that pass (per-sample accuracy)
  pass@k        unbiased pass@k of the samples (Chen et al. 2021), k = samples per
                session (the smallest over the arm's tasks)
  tok/success   billed tokens / solved tasks (tokens per solved task: a best-of-8 arm
                pays its 8 samples per success); billed = every sample/select call
                with usage, failed calls included (as curve and fairness count)
"""

RAW_NOTE = (
    "* raw/1k = Elo / (tokens/1000), the ratio popular guides print: it depends on the arbitrary "
    "1000 anchor; compare arms with d_elo/1k or marg/1k instead."
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "elo",
        help="Bradley–Terry Elo, intervals by task, Elo per 1K tokens, length control",
        description=(
            "Fit Bradley–Terry ratings to pairwise comparisons (exact maximum likelihood),\n"
            "anchor them at 1000 Elo and give 95% intervals clustered by task. With\n"
            "--ledger, add token columns: Elo per 1K tokens, marginal Elo per 1K tokens along\n"
            "the cost frontier, Elo per tenfold tokens, pass@k and tokens per success."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "comparisons",
        nargs="*",
        metavar="COMPARISONS",
        help="comparisons file(s): several files, globs or folders (a sharded run's shards) "
        "read as one",
    )
    parser.add_argument(
        "--ledger",
        metavar="LEDGER",
        action="append",
        help="token ledger (JSONL) for the cost columns; a glob or a folder of ledgers, or "
        "repeat --ledger: shards merge, a call recorded twice counts once",
    )
    parser.add_argument(
        "--anchor",
        metavar="NAME",
        help="player pinned at 1000 Elo (default: the cheapest arm with known tokens, else the first player)",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        metavar="N",
        help=(
            f"task-bootstrap rounds; implies --intervals bootstrap (default {DEFAULT_ROUNDS}, "
            f"or {DEFAULT_ROUNDS_MANY} above {MANY_PLAYERS} players; 0 = no intervals)"
        ),
    )
    parser.add_argument(
        "--intervals",
        choices=INTERVALS,
        default=None,
        help="how the 95%% intervals are made (default: sandwich; see below)",
    )
    parser.add_argument(
        "--simultaneous",
        action="store_true",
        help="intervals that hold for all arms together (Bonferroni over the arms compared "
        "with the anchor), not one at a time",
    )
    parser.add_argument(
        "--length-control",
        action="store_true",
        help="also fit Elo at equal answer length (needs a_tokens,b_tokens columns)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="bootstrap / draw seed (default 0)"
    )
    parser.add_argument(
        "--prior",
        type=float,
        default=0.0,
        metavar="P",
        help="Gaussian prior strength on θ (penalty P/2·Σθ²; default 0 = exact maximum likelihood)",
    )
    parser.add_argument(
        "--task-weight",
        choices=("none", "equal"),
        default="none",
        help="'equal': every task weighs the same however many comparisons it has (default: none)",
    )
    add_format_option(parser, FORMATS)
    parser.add_argument(
        "--example", action="store_true", help="run on the best-of-k example shipped with eloledger"
    )
    from eloledger.cli.options import add_selection_args

    add_selection_args(parser)
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="X",
        help="'worth it' marginal Elo per 1K tokens per task: marks each arm worth_it and "
        "names the knee (needs --ledger)",
    )
    add_wide_option(parser)
    parser.add_argument(  # the figure for a report (eloledger.plots)
        "--plot",
        metavar="FILE",
        help="also write the figure: Elo against tokens per task with --ledger (the "
        "diminishing-returns plot), else Elo with intervals; FILE.svg or FILE.png (needs the "
        "'plot' extra: matplotlib)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.tables import to_json

    plot = getattr(args, "plot", None)
    if plot:  # a bad name or a missing matplotlib fails before the fit
        from eloledger.plots import check_plot_target

        check_plot_target(plot)
    report = compute(args)
    knee = _worth_it(report, args)
    if plot:
        from eloledger.plots import write_figure

        write_figure(report, plot)
        print(f"figure written to {plot}", file=sys.stderr)  # as `curve --plot` says it
    if args.format == "json":
        data = report.to_json()
        if knee is not None:
            data["worth_it"] = knee
        print(to_json(data))
        return 0
    for warning in report.warnings:
        warn(warning)  # names from files: made visible
    print(render_text(report, args))
    return 0


def compute(args: argparse.Namespace) -> Any:
    """The Elo report these arguments ask for (``eloledger run`` reuses it for its table)."""
    from eloledger.report.elo_files import elo_of_files

    comps_path, ledger_path = _inputs(args)
    if args.bootstrap is not None and args.bootstrap < 0:
        raise UserError(
            f"--bootstrap {args.bootstrap}: must be >= 0", fix="give a number of rounds, e.g. 1000"
        )
    if not math.isfinite(args.prior) or args.prior < 0:
        raise UserError(
            f"--prior {args.prior}: must be a finite number >= 0", fix="e.g. --prior 0.05"
        )
    report = elo_of_files(
        comps_path,
        ledger_path,
        selection=_selection(args),
        anchor=args.anchor,
        default_anchor=getattr(args, "default_anchor", None),  # a run's baseline (run_cmd)
        bootstrap=args.bootstrap,
        intervals=interval_method(args),
        seed=args.seed,
        prior=args.prior,
        task_weight=args.task_weight,
        length_control=bool(getattr(args, "length_control", False)),
        simultaneous=bool(getattr(args, "simultaneous", False)),
    )
    if ledger_path:  # a model the gateway substituted: the table would compare the wrong ones
        from dataclasses import replace

        from eloledger.ledger.answered import ledger_warnings

        more = ledger_warnings(ledger_path)
        if more:
            report = replace(report, warnings=[*report.warnings, *more])
    return report


def _worth_it(report: Any, args: argparse.Namespace) -> dict[str, Any] | None:
    """--threshold: each arm's worth_it and the knee; None without it."""
    threshold = getattr(args, "threshold", None)
    if threshold is None:
        return None
    if not math.isfinite(threshold):
        raise UserError(f"--threshold {threshold}: must be a finite number", fix="e.g. 5")
    if not report.has_costs:
        raise UserError(
            "--threshold needs token costs", fix="add --ledger LEDGER (the run's token ledger)"
        )
    from eloledger.budget.gates import mark_worth_it

    name = mark_worth_it(report.players, threshold)
    args.knee = {"threshold": threshold, "knee": name}  # for render_text (the report is frozen)
    return args.knee


def _inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    if args.example:
        if args.comparisons:
            raise UserError(
                "give either COMPARISONS or --example, not both", fix="drop one of them"
            )
        folder = _example_dir()
        ledger = args.ledger or str(folder / "ledger.jsonl")
        return str(folder / "comparisons.csv"), ledger
    if not args.comparisons:
        raise UserError(
            "missing COMPARISONS file", fix="eloledger elo comparisons.csv (or --example)"
        )
    return args.comparisons, args.ledger  # a str (eloledger run) or the list argparse gives


def _example_dir() -> Path:
    from importlib.resources import files

    return Path(str(files("eloledger") / "data" / "examples"))


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    """--split/--tag/--tasks as keyword arguments (empty: every row)."""
    split, tags, tasks = (getattr(args, k, None) for k in ("split", "tag", "tasks"))
    if split is None and not tags and tasks is None:
        return {}
    return {"split": split, "tags": tags or (), "tasks_file": tasks}


def render_text(report: Any, args: argparse.Namespace) -> str:
    """The report as ``args.format`` (table, csv or md), with the anchor and cost notes."""
    from eloledger.tables import render, table_width, wrap
    from eloledger.textsafe import visible

    lc = report.length_coef is not None
    with_worth_it = bool(getattr(args, "knee", None))
    if args.format == "csv":
        return csv_text(report, cost_columns(report, with_worth_it))
    width = table_width(getattr(args, "wide", False)) if args.format == "table" else None
    cols = [c.table_column() for c in elo_columns(report, with_worth_it)]
    records = [shown_record(r) for r in report.players]
    body = render(args.format, records, cols, width=width)
    notes = [_anchor_note(report, args), report.multiplicity_note()]
    knee = getattr(args, "knee", None)
    if knee is not None:
        notes.append(
            f"knee: {knee['knee'] or '-'} (the costliest frontier arm whose marginal step "
            f"clears {knee['threshold']:g} Elo per 1K tokens per task; worth it = on the "
            "frontier up to the knee)"
        )
    if lc:
        notes.append(_length_note(report.length_coef))
    header = body.split("\n", 1)[0].split()
    if report.has_costs and "raw/1k*" in header:
        notes.append(RAW_NOTE)
    if args.format == "table" and "marg/1k" in header and "dominated" not in header:
        # the column that says why marg/1k is blank did not fit: say it in words
        names = [str(p["name"]) for p in report.players if p.get("dominated")]
        if names:
            notes.append(
                "marg/1k blank: dominated (a mix of two frontier arms buys at least as much "
                f"Elo for the same tokens): {', '.join(names)}"
            )
    if args.format == "md":
        return body + "\n\n" + "\n".join(f"_{visible(n)}_  " for n in notes)
    return body + "\n\n" + "\n".join(wrap(n, width) for n in notes)


def _length_note(coef: dict[str, Any]) -> str:
    return (
        f"length control: lc_elo = Elo at equal answer length; length_coef β = "
        f"{coef['elo']:+.1f} Elo ({coef['ci_low']:+.1f}..{coef['ci_high']:+.1f}), the "
        "length-outcome association (how much more the longer answer wins beyond the "
        "ratings; a judge bias only if better answers are not also longer) "
        f"(s = {coef['s']:.2f}, RMS of ln token ratios, "
        f"{coef['comparisons_with_tokens']:,} comparisons with lengths)"
    )


def _anchor_note(report, args: argparse.Namespace) -> str:
    text = f"anchor: {report.anchor} = 1000 Elo"
    if report.intervals == "sandwich":
        text += (
            f"; {report.level:.0%} intervals (relative to the anchor) clustered by task "
            "(sandwich; --intervals bootstrap for the exact task bootstrap)"
        )
    if report.bootstrap_rounds:
        text += (
            f"; {report.level:.0%} intervals (relative to the anchor) from "
            f"{report.bootstrap_rounds} bootstrap rounds over tasks (seed {args.seed})"
        )
    if report.task_weight == "equal":
        text += "; every task weighs the same"
    if report.prior:
        text += f"; Gaussian prior {report.prior:g}"
    return text
