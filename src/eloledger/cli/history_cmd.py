"""`eloledger history`: the run index (one line per indexed run)."""

from __future__ import annotations

import argparse
from typing import Any

from eloledger.cli.options import add_format_option


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "history",
        help="the run index: runs, hashes, tokens, pass@1, p95 latency, verdicts",
        description="List indexed runs (eloledger run adds each run; --add indexes ledgers).",
    )
    parser.add_argument("--where", action="store_true", help="print the index file's path")
    parser.add_argument(
        "--add", metavar="LEDGER", nargs="+", help="index the run in these ledger(s) now"
    )
    add_format_option(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.history import (
        append_entry,
        comparisons_beside,
        index_path,
        read_index,
        run_entry,
    )
    from eloledger.tables import to_json

    if args.where:
        print(index_path())
        return 0
    if args.add:
        append_entry(run_entry(args.add, comparisons=comparisons_beside(args.add)))
    entries = read_index()
    if args.format == "json":
        print(to_json({"index": str(index_path()), "runs": entries}))
        return 0
    print(render(entries))
    return 0


def render(entries: list[dict[str, Any]]) -> str:
    from eloledger.history import HISTORY_COLUMNS, history_rows, verdict_lines
    from eloledger.tables import render_table, terminal_width

    if not entries:
        return "no runs indexed yet (eloledger run adds each run; history --add LEDGER)"
    table = render_table(history_rows(entries), list(HISTORY_COLUMNS), width=terminal_width())
    lines = verdict_lines(entries)
    return table + ("\n\nfairness:\n" + "\n".join(f"  {line}" for line in lines) if lines else "")
