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
  eloledger tokens runs/ledger.jsonl --by task --format csv > tokens_by_task.csv
  eloledger tokens runs/ledger.jsonl --format json | jq '.groups[] | {name, total_tokens}'"""

BY_CHOICES = ("arm", "task")


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
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.ledger.columns import SUMMARY_COLUMNS
    from eloledger.ledger.reader import read_ledger
    from eloledger.ledger.summary import summarize, summary_warnings
    from eloledger.tables import Column, render, to_json

    ledger = read_ledger(args.ledger, columns=SUMMARY_COLUMNS)
    groups = summarize(ledger, by=args.by)
    warnings = [*ledger.warnings, *summary_warnings(ledger, by=args.by)]
    if args.format == "json":
        print(to_json({"by": args.by, "groups": groups, "warnings": warnings}))
        return 0
    columns = [
        Column("name", args.by),
        Column("calls", "calls"),
        Column("ok", "ok"),
        Column("errors", "errors"),
        Column("usage_missing", "usage missing"),
        Column("prompt_tokens", "prompt"),
        Column("completion_tokens", "completion"),
        Column("total_tokens", "total"),
        Column("mean_total_tokens", "mean/call", 1),
        Column("task_mean_total_tokens", "mean/task", 1),
    ]
    print(render(args.format, groups, columns))
    for message in warnings:
        print(f"eloledger: warning: {message}", file=sys.stderr)
    return 0
