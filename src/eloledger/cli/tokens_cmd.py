"""`eloledger tokens`: token totals per arm, task, session, model, day, project or source."""

from __future__ import annotations

import argparse
from typing import Any

from eloledger.cli.options import FORMATS, add_format_option
from eloledger.cli.warn import warn

DESCRIPTION = """\
Sum the tokens in one or several ledgers per arm, task, session, model, day, project, source or
run (run_id), or as a task x arm table (--by task,arm); --since keeps the calls from a date on.

Only sample and select calls count (judge and probe calls are not an arm's cost). Token sums
cover successful calls that reported usage; failed calls are counted in 'errors' and successful
calls without usage in 'usage_missing', never as zero-token successes. Calls whose usage is
eloledger's estimate (the gateway sent none) are in the sums but counted in 'estimated', with a
warning naming the groups. task_mean_total_tokens is the mean over tasks of each task's total,
so a few long tasks do not dominate.
Several ledgers (files, globs or folders of *.jsonl) merge on read; a call recorded twice
(concatenated files, overlapping shards) is counted once, with a warning naming the lines.
Field names from other tools (input_tokens, strategy, case_id, nested usage, ...) are understood.
A torn last line (a writer crashed mid-write) is skipped with a warning.
With a price table (prices.toml in eloledger's config folder; per model, per 1M tokens: input,
output, cache_read, cache_write) a cost column appears for priced models; prices are never
guessed or fetched."""

EPILOG = """\
examples:
  eloledger tokens runs/ledger.jsonl
  eloledger tokens runs/shard-*.jsonl             # shards of one run, merged
  eloledger tokens runs/ --by model               # every ledger in a folder
  eloledger tokens runs/ledger.jsonl --sort cost --wide
  eloledger tokens runs/ledger.jsonl --by task --format csv > tokens_by_task.csv
  eloledger tokens runs/ --by run --since 2026-11-20  # each run since a date
  eloledger tokens runs/ledger.jsonl --by task,arm    # tokens per task under each arm
  eloledger tokens runs/ledger.jsonl --format json | jq '.groups[] | {name, total_tokens}'"""


# summary.BY_CHOICES, spelled out: importing the summary (numpy) here slowed every command's
# start by ~0.15 s (tests/imports/test_import_fast_paths.py checks the two agree).
BY_CHOICES = ("arm", "task", "session", "model", "day", "project", "source", "run")
CROSS_TAB = "task,arm"  # tasks down, arms across: total tokens in each cell


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tokens",
        help="token totals per arm, task, session, model, day, project or source",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "ledger", metavar="LEDGER", nargs="+", help="JSONL ledger(s): files, globs or folders"
    )
    parser.add_argument(
        "--by",
        choices=(*BY_CHOICES, CROSS_TAB),
        default="arm",
        metavar="KEY",
        help=f"group by one of {', '.join(BY_CHOICES)} (default: arm); run = each run_id; "
        f"{CROSS_TAB} = a task x arm table of total tokens",
    )
    parser.add_argument(
        "--since",
        metavar="DATE",
        help="only calls from this UTC date or ISO time on (e.g. 2026-11-20 or "
        "2026-11-20T09:30); rows without a time are left out",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="fold the whole ledger; by default one ledger in writing order over 8 MB keeps "
        "its tally in the user cache folder, and the next read folds only what was appended",
    )
    parser.add_argument(
        "--sort",
        choices=("name", "total", "cost"),
        default="name",
        help="row order: name (default), total tokens or cost, largest first",
    )
    add_format_option(parser, FORMATS)
    from eloledger.cli.options import add_selection_args, add_wide_option

    add_wide_option(parser)
    add_selection_args(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.ledger.columns import PRICE_COLUMNS, SUMMARY_COLUMNS
    from eloledger.ledger.prices import load_prices
    from eloledger.ledger.summary import MISSING_NAME
    from eloledger.ledger.tally import read_tally, tally_ledger
    from eloledger.locations import cache_dir
    from eloledger.tables import render, table_width, to_json

    prices = load_prices()
    columns = (*SUMMARY_COLUMNS, "latency_ms", "ts", *(PRICE_COLUMNS if prices else ()))
    if args.by in ("session", "model", "project", "source") and args.by not in columns:
        columns = (*columns, args.by)
    if args.by == "run":
        columns = (*columns, "run_id")
    since = _since(args.since)
    if args.by == CROSS_TAB:
        return _cross_tab(args, columns, since)
    if args.split is None and not args.tag and args.tasks is None and since is None:
        cache = None if args.no_cache else (lambda: cache_dir() / "tallies")
        tally, warnings = read_tally(args.ledger, columns, args.by, prices, cache=cache)
    else:
        ledger = _selected(args, columns, since)
        tally, warnings = tally_ledger(ledger, args.by, prices)
    groups = _sorted(tally.groups(), args.sort)
    judge = tally.judge_summary()
    billed = sum(g["total_tokens"] for g in groups) + (judge["total_tokens"] if judge else 0)
    if args.format == "json":
        out = {"by": args.by, "groups": groups, "judge": judge, "billed_total_tokens": billed}
        print(to_json({**out, "warnings": warnings}))
        return 0
    has_cost = any(g.get("cost") is not None for g in groups)
    table_columns = _columns(args.by, has_cost, args.format, groups)
    if args.by == "arm" and [g["name"] for g in groups] == [MISSING_NAME]:
        warnings.append(
            "no row names an arm (an imported agent log?): group the calls with --by model, "
            "--by project, --by source or --by session"
        )
    if judge is not None:
        warnings.append(
            f"the LLM judge made {judge['calls']:,} call(s) for {judge['total_tokens']:,} tokens: "
            "not in the arms' TOTAL (not an arm's cost), but billed by the gateway (JUDGE line)"
        )
    if args.format in ("table", "md"):
        extra = []
        if judge is not None:
            extra = [_display(judge), {"name": "BILLED", "total_tokens": f"{billed:,}"}]
        records = [_display(g) for g in [*groups, _totals(groups)]] + extra
        width = table_width(args.wide) if args.format == "table" else None
        print(render(args.format, records, table_columns, width=width))
    else:
        print(render(args.format, groups, table_columns))

    for message in warnings:
        warn(message)
    return 0


def _since(text: str | None) -> float | None:
    """--since as Unix seconds (a date or ISO time; no zone = UTC)."""
    if text is None:
        return None
    from eloledger.errors import UserError
    from eloledger.ledger.canonical import parse_ts

    try:
        value = parse_ts(text.strip())
    except UserError:
        value = None
    if not isinstance(value, (int, float)):
        raise UserError(
            f"--since {text!r}: not a date or ISO time", fix="e.g. --since 2026-11-20"
        ) from None
    return float(value)


def _selected(args: argparse.Namespace, columns: tuple[str, ...], since: float | None) -> Any:
    """The rows --split/--tag/--tasks and --since choose, as one columnar ledger."""
    from eloledger.budget.gates import read_selected

    if since is None:
        return read_selected(args.ledger, columns, split=args.split, tags=args.tag or (), tasks_file=args.tasks)  # fmt: skip
    from eloledger.ledger.reader import read_rows

    rows, warnings = _chosen_rows(args, since)
    ledger = read_rows(rows, columns=columns)
    ledger.warnings[:0] = warnings
    return ledger


def _chosen_rows(args: argparse.Namespace, since: float | None) -> tuple[list[dict], list[str]]:
    """Canonical rows (duplicates dropped) that the selection flags and --since keep."""
    from eloledger.budget.gates import chosen_rows
    from eloledger.ledger.merge import read_rows_many

    rows, warnings = read_rows_many(args.ledger)
    rows = chosen_rows(rows, args.split, args.tag or (), args.tasks)
    if since is not None:
        rows = [r for r in rows if isinstance(r.get("ts"), (int, float)) and r["ts"] >= since]
    return rows, warnings


def _cross_tab(args: argparse.Namespace, columns: tuple[str, ...], since: float | None) -> int:
    """Tasks down, arms across, each cell the task's total tokens under that arm: each arm's
    rows tallied by task, so a cell counts what ``--by arm`` counts (ok sample/select calls
    with usage; judge calls are no arm's cost). The ledger is read once, by columns."""
    from eloledger.ledger.tally import tally_rows
    from eloledger.tables import Column, render, table_width, to_json

    ledger = _selected(args, columns, since)
    warnings = list(ledger.warnings)
    cells: dict[str, dict[str, int]] = {}
    arms = []
    for arm, rows in _arm_rows(ledger):
        arms.append(arm)
        tally = tally_rows(ledger, rows, "task")

        def where(i: int, rows: Any = rows) -> str:  # (evidence: the row's file and line)
            return str(ledger.where(int(rows[i])))

        said = tally.warnings(where)
        warnings += [f"arm {arm}: {w}" for w in said]  # one arm's calls: say which
        for group in tally.groups():
            cells.setdefault(str(group["name"]), {})[arm] = int(group["total_tokens"])
    if args.format == "json":
        print(to_json({"by": CROSS_TAB, "arms": arms, "tasks": cells, "warnings": warnings}))
        return 0
    records: list[dict[str, Any]] = [
        {"task": t, **{a: cells[t].get(a, 0) for a in arms}} for t in sorted(cells)
    ]
    records.append({"task": "TOTAL", **{a: sum(c.get(a, 0) for c in cells.values()) for a in arms}})
    if args.format in ("table", "md"):
        records = [{k: v if k == "task" else f"{v:,}" for k, v in r.items()} for r in records]
    cols = [Column("task", "task"), *(Column(a, a) for a in arms)]
    width = table_width(args.wide) if args.format == "table" else None
    print(render(args.format, records, cols, width=width))

    for message in warnings:
        warn(message)
    return 0


def _arm_rows(ledger: Any) -> list[tuple[str, Any]]:
    """Each arm (by name) and the indices of its rows, judge calls left out."""
    import numpy as np

    arm = ledger.factor("arm")
    costed = (arm.codes >= 0) & ~ledger.factor("role").mask("judge")
    codes = np.unique(arm.codes[costed]).tolist()
    named = sorted((str(arm.levels[c]), c) for c in codes)
    return [(name, np.flatnonzero(costed & (arm.codes == c))) for name, c in named]


def _sorted(groups: list[dict[str, Any]], order: str) -> list[dict[str, Any]]:
    if order == "name":
        return sorted(groups, key=lambda g: str(g["name"]))
    key = "total_tokens" if order == "total" else "cost"
    return sorted(groups, key=lambda g: (g.get(key) is None, -(g.get(key) or 0), str(g["name"])))


def _columns(by: str, has_cost: bool, fmt: str, groups: list[dict[str, Any]]) -> list[Any]:
    from eloledger.tables import Column

    table = fmt in ("table", "md")
    # drop ranks: at 80 columns the token counts stay, latency goes first
    columns = [
        Column("name", by),
        Column("calls", "calls"),
        Column("ok", "ok", drop=3),
        Column("errors", "errors"),
        Column("usage_missing", "usage missing" if table else "usage_missing"),
        Column("usage_estimated", "estimated" if table else "usage_estimated"),
    ]
    if not table:
        columns.append(Column("estimated_token_share", "estimated_token_share", 4))
    columns += [
        Column("prompt_tokens", "prompt", drop=2),
        Column("completion_tokens", "completion", drop=1),
        Column("total_tokens", "total"),
        Column("mean_total_tokens", "mean/call", None if table else 1, drop=4),
        Column("task_mean_total_tokens", "mean/task", None if table else 1),
    ]
    if any(g.get("latency_p95_ms") is not None for g in groups):
        columns += [
            Column("latency_p50_ms", "p50 ms" if table else "latency_p50_ms", 0, drop=5),
            Column("latency_p95_ms", "p95 ms" if table else "latency_p95_ms", 0, drop=6),
        ]
    if has_cost:
        columns.append(Column("cost", "cost", 4))
    if not table:
        columns = [Column(c.key, c.key, c.digits) for c in columns]
    elif not any(g.get("usage_estimated") for g in groups):  # shown only when there are any
        columns = [c for c in columns if c.key != "usage_estimated"]
    return columns


def _totals(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The totals row of the table (means are over all groups' rows, not a mean of means)."""
    keys = ("calls", "ok", "errors", "usage_missing", "usage_estimated")
    total: dict[str, Any] = {"name": "TOTAL", **{k: sum(g[k] for g in groups) for k in keys}}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        total[key] = sum(g[key] for g in groups)
    guessed = sum((g.get("estimated_token_share") or 0.0) * g["total_tokens"] for g in groups)
    total["estimated_token_share"] = (
        guessed / total["total_tokens"] if total["total_tokens"] else None
    )
    with_usage = total["ok"] - total["usage_missing"]
    total["mean_total_tokens"] = total["total_tokens"] / with_usage if with_usage else None
    costs = [g.get("cost") for g in groups]
    total["cost"] = sum(costs) if costs and None not in costs else None
    return total


def _display(group: dict[str, Any]) -> dict[str, Any]:
    """Counts with thousands separators and means rounded, for people (JSON/CSV stay raw)."""
    out = dict(group)
    for key, value in group.items():
        if key == "name" or value is None or isinstance(value, bool):
            continue
        if key == "by_arm" or key.startswith("latency_"):
            continue
        if key in ("mean_total_tokens", "task_mean_total_tokens"):
            out[key] = f"{value:,.1f}"
        elif isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            out[key] = f"{int(value):,}" if key != "cost" else f"{value:,.4f}"
        elif key != "cost" and key != "estimated_token_share":
            out[key] = f"{value:,.1f}"
    if group.get("usage_estimated"):
        share = group.get("estimated_token_share") or 0.0
        out["usage_estimated"] = f"{group['usage_estimated']:,} ({share:.0%})"
    return out
