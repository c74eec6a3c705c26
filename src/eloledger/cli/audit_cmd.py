"""`eloledger audit`: the guide's direction audit over the run index (issue 20 item 8)."""

from __future__ import annotations

import argparse


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
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.history import audit, read_index
    from eloledger.tables import Column, render_table, terminal_width, to_json

    rows = audit(read_index(), by=args.by, since=args.since)
    if args.format == "json":
        print(to_json({"by": args.by, "periods": rows}))
        return 0
    shown = [{**r, "drift": "COST DRIFT" if r["cost_drift"] else ""} for r in rows]
    print(
        render_table(
            shown,
            [
                Column("period", args.by),
                Column("runs", "runs"),
                Column("mean_output_tokens", "out/call", 0),
                Column("tokens_per_task", "tok/task", 0),
                Column("bestofn_share", "BoN share", 2),
                Column("retries", "retries"),
                Column("pass_at_1_n1", "n=1 pass", 3),
                Column("drift", "flag"),
            ],
            width=terminal_width(),
        )
        if rows
        else "no runs indexed (eloledger history --where)"
    )
    return 0
