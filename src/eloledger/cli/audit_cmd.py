"""`eloledger audit`: the guide's direction audit over the run index."""

from __future__ import annotations

import argparse

from eloledger.cli.options import add_format_option


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "audit",
        help="direction audit per week or run: tokens, output length, Best-of-N share, drift",
        description=(
            "Per ISO week (or run): mean output length, tokens per task, share of Best-of-N "
            "arms, retries and the n=1 pass rate; flags COST DRIFT when tokens per task rise "
            "more than 10% while the n=1 pass rate does not rise."
        ),
    )
    parser.add_argument("--since", metavar="DATE", help="only runs from this ISO date on")
    parser.add_argument("--by", choices=("week", "run"), default="week")
    add_format_option(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.history import AUDIT_COLUMNS, audit, audit_rows, read_index
    from eloledger.tables import Column, render_table, terminal_width, to_json

    rows = audit(read_index(), by=args.by, since=args.since)
    if args.format == "json":
        print(to_json({"by": args.by, "periods": rows}))
        return 0
    columns = [Column("period", args.by), *AUDIT_COLUMNS[1:]]
    print(
        render_table(audit_rows(rows), columns, width=terminal_width())
        if rows
        else "no runs indexed (eloledger history --where)"
    )
    return 0
