"""`eloledger tokens`: token totals per arm or per task from a JSONL ledger."""

from __future__ import annotations

import argparse
import sys

DESCRIPTION = """\
Sum the tokens in a ledger per arm or per task.

Only sample and select calls count (judge and probe calls are not an arm's cost). Token sums
cover successful calls that reported usage; failed calls are counted in 'errors' and successful
calls without usage in 'usage_missing', never as zero-token successes. task_mean_total_tokens is
the mean over tasks of each task's total, so a few long tasks do not dominate.
Field names from other tools (input_tokens, strategy, case_id, nested usage, ...) are understood.
A torn last line (a writer crashed mid-write) is skipped with a warning."""

EPILOG = """\
examples:
  eloledger tokens runs/ledger.jsonl
  eloledger tokens runs/ledger.jsonl --sort cost --wide
  eloledger tokens runs/ledger.jsonl --by task --format csv > tokens_by_task.csv
  eloledger tokens runs/ledger.jsonl --format json | jq '.groups[] | {name, total_tokens}'"""

BY_CHOICES = ("arm", "task")
SORT_CHOICES = ("name", "cost")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tokens",
        help="token totals per arm or task from a ledger",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("ledger", metavar="LEDGER", help="JSONL ledger file")
    parser.add_argument("--by", choices=BY_CHOICES, default="arm", help="group by (default: arm)")
    parser.add_argument(
        "--format",
        choices=("table", "json", "csv", "md"),
        default="table",
        help="output format (default: table)",
    )
    parser.add_argument(
        "--sort",
        choices=SORT_CHOICES,
        default=None,
        help=(
            "order of the rows: by name, or by total tokens, costliest first (default: name "
            "in tables; JSON/CSV keep the ledger's order unless --sort is given)"
        ),
    )
    from eloledger.cli.elo_cmd import add_wide_option

    add_wide_option(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.ledger.columns import SUMMARY_COLUMNS
    from eloledger.ledger.reader import read_ledger
    from eloledger.ledger.summary import summarize, summary_warnings
    from eloledger.tables import render, table_width, to_json

    ledger = read_ledger(args.ledger, columns=SUMMARY_COLUMNS)
    order = getattr(args, "sort", None) or ("name" if args.format in ("table", "md") else None)
    groups = sort_groups(summarize(ledger, by=args.by), order)
    warnings = [*ledger.warnings, *summary_warnings(ledger, by=args.by)]
    if args.format == "json":
        print(to_json({"by": args.by, "groups": groups, "warnings": warnings}))
        return 0
    records = groups if args.format == "csv" else [*groups, totals(groups)]
    width = table_width(getattr(args, "wide", False)) if args.format == "table" else None
    print(render(args.format, records, table_columns(args.by, groups), width=width))
    for message in warnings:
        print(f"eloledger: warning: {message}", file=sys.stderr)
    return 0


COUNTS = ("calls", "ok", "errors", "usage_missing", "usage_estimated")
TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens")


def table_columns(by: str, groups: list[dict]) -> list:
    """The columns, most important first to stay; 'estimated' only when the ledger has any."""
    from eloledger.tables import Column

    columns = [
        Column("name", by),
        Column("calls", "calls", group=True),
        Column("ok", "ok", group=True, drop=3),
        Column("errors", "errors", group=True),
        Column("usage_missing", "no usage", group=True),
    ]
    if any(g.get("usage_estimated") for g in groups):
        columns.append(Column("usage_estimated", "estimated", group=True))
    return columns + [
        Column("prompt_tokens", "prompt", group=True, drop=5),
        Column("completion_tokens", "completion", group=True, drop=4),
        Column("total_tokens", "total", group=True),
        Column("mean_total_tokens", "mean/call", 1, group=True, drop=2),
        Column("task_mean_total_tokens", "mean/task", 1, group=True),
    ]


def sort_groups(groups: list[dict], order: str | None) -> list[dict]:
    if order is None:
        return groups
    if order == "cost":
        return sorted(groups, key=lambda g: (-(g.get("total_tokens") or 0), str(g["name"])))
    return sorted(groups, key=lambda g: str(g["name"]))


def totals(groups: list[dict]) -> dict:
    """The sums over every group; mean/call over all ok calls with usage (no mean per task)."""
    row: dict = {"name": "total"}
    for key in COUNTS + TOKENS:
        values = [g.get(key) for g in groups if g.get(key) is not None]
        row[key] = sum(values) if values else None
    with_usage = (row["ok"] or 0) - (row["usage_missing"] or 0)
    row["mean_total_tokens"] = row["total_tokens"] / with_usage if with_usage > 0 else None
    return row
