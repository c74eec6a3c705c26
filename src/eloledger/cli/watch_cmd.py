"""`eloledger watch LEDGER`: the Run view following a ledger that another process writes."""

from __future__ import annotations

import argparse
from pathlib import Path

from eloledger.errors import UserError

EPILOG = """\
examples:
  eloledger watch runs/demo.jsonl             follow from the start (default)
  eloledger watch runs/demo.jsonl --from-end  attach mid-run: count only rows written from
                                              now on (no progress bar or budget gauge)
  ssh box -t eloledger watch ~/runs/exp.jsonl watch a remote run over SSH
  eloledger watch --claude-code --from-end    live spend per session and model of Claude Code

The ledger is read by byte offset: a torn last line is kept until it is complete, and a
truncated or replaced file is read again from its start. Any number of viewers can follow
one ledger. Keys: p pauses the view (reading stops; the run goes on, and p again
catches up), f follow the newest requests, q (or ctrl+q) quit.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "watch",
        help="follow a ledger being written by another process (the Run view)",
        description="Open the Run view on a JSONL ledger and follow it as it grows.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("ledger", metavar="LEDGER", nargs="?", help="path to the JSONL ledger")
    agent_logs = parser.add_argument_group("agent logs (instead of LEDGER)")
    for kind in ("claude-code", "codex", "gemini-cli"):
        agent_logs.add_argument(
            f"--{kind}",
            dest="logs",
            action="store_const",
            const=kind,
            help=f"follow {kind} session logs",
        )
    agent_logs.add_argument(  # the flag's old name, still accepted
        "--gemini", dest="logs", action="store_const", const="gemini-cli", help=argparse.SUPPRESS
    )
    agent_logs.add_argument("--logs-dir", metavar="DIR", help="log folder (default: the CLI's own)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--from-start",
        dest="from_start",
        action="store_true",
        default=True,
        help="replay the ledger from its first row (default)",
    )
    where.add_argument(
        "--from-end",
        dest="from_start",
        action="store_false",
        help="start at the current end: count only rows written from now on (calls and "
        "tokens since attaching; no progress bar or budget gauge, as earlier rows are unread)",
    )
    parser.add_argument("--theme", help="theme name")
    parser.set_defaults(handler=handle)


def check_ledger_path(path: Path) -> Path:
    """A missing file is fine only when its folder exists (the run may not have started);
    a file whose first line is not a ledger row is refused (it is the wrong file)."""
    if path.is_dir():
        raise UserError(f"{path}: is a folder, not a ledger file", fix="pass the .jsonl file")
    if path.exists():
        from eloledger.ledger.sources import check_readable

        check_readable(path)  # a FIFO or a gzip file: refuse at once, never block
    elif not path.parent.is_dir():
        raise UserError(
            f"{path}: no such file or folder",
            fix="check the path; the run writes its ledger where its spec says",
        )
    check_first_line(path)
    return path


def check_first_line(path: Path) -> None:
    """Refuse a file whose first complete line is not a ledger row (JSON object per call)."""
    from eloledger.ledger.reader import parse_line

    try:
        with path.open("rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return  # not there yet, or unreadable now: the viewer says so while it waits
    if b"\n" not in head:
        return  # empty, or a first line still being written
    first = head.split(b"\n", 1)[0]
    if not first.strip():
        return
    try:
        parse_line(first, where=f"{path}:1")
    except UserError as exc:
        raise UserError(
            f"{path}:1: this is not a ledger: {exc.message.removeprefix(f'{path}:1: ')}",
            fix="give the run's .jsonl ledger (the 'ledger' path of its spec)",
        ) from None


def handle(args: argparse.Namespace) -> int:
    if getattr(args, "logs", None):
        return _watch_logs(args)
    if not args.ledger:
        raise UserError(
            "watch needs a LEDGER", fix="pass a .jsonl file, or --claude-code/--codex/--gemini-cli"
        )
    path = check_ledger_path(Path(args.ledger))
    from eloledger.tui.app import run_tui

    return run_tui(watch=path, from_start=args.from_start, theme=args.theme)


def _watch_logs(args: argparse.Namespace) -> int:
    """Follow an agent CLI's session logs (agent-logs option group)."""
    from eloledger.agents.importer import default_roots

    if args.ledger:
        raise UserError("pass either LEDGER or --claude-code/--codex/--gemini-cli, not both")
    roots = [Path(args.logs_dir).expanduser()] if args.logs_dir else default_roots(args.logs)
    from eloledger.tui.log_watch import run_log_watch

    return run_log_watch(args.logs, roots, from_start=args.from_start, theme=args.theme)
