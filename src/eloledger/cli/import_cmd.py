"""`eloledger import claude-code|codex|gemini-cli|inspect`: agent logs on disk -> a ledger."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from eloledger.cli.options import add_format_option
from eloledger.clientfacts import client_name

DESCRIPTION = """\
Read the session logs an agent CLI already wrote and append one ledger row per model call
(source, session, project, model, ts, tokens, call_id, usage_source=log).

Each call is imported once: repeated lines of one call are merged (Claude: per content block,
largest usage; Gemini: each id written twice, last write), calls replayed into other files
(resumed sessions, sidechains, forked Codex rollouts) are dropped by their call key, and a
second import appends only what is new (byte offsets in LEDGER.import.json + the keys already
in the ledger). Files still being written are safe: an unfinished last line, and the last call
of a file written in the last --settle seconds, wait for the next import. Lines of an unknown
shape are counted and reported (file:line), never imported as zero tokens."""

EPILOG = """\
default folders:
  claude-code  $CLAUDE_CONFIG_DIR (comma-separated) else ~/.claude   (reads projects/**.jsonl)
  codex        $CODEX_HOME else ~/.codex            (sessions/ and archived_sessions/)
  gemini-cli   ~/.gemini                            (tmp/*/chats/session-*.jsonl)
  inspect      LOG files or folders (.eval, .json); default $INSPECT_LOG_DIR else ./logs

examples:
  eloledger import claude-code
  eloledger import codex ~/.codex -o runs/codex.jsonl
  eloledger import inspect logs/*.eval -o runs/inspect.jsonl --format json
  eloledger tokens ~/.local/share/eloledger/imports/claude-code.jsonl --by session"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "import",
        help="import Claude Code / Codex / Gemini CLI / inspect_ai logs into a ledger",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "kind",
        type=client_name,  # "gemini", the old name, is read as gemini-cli
        choices=("claude-code", "codex", "gemini-cli", "inspect"),
        help="which tool's logs",
    )
    parser.add_argument(
        "paths", nargs="*", metavar="DIR|LOG", help="log folder(s) or files (default: see below)"
    )
    parser.add_argument("-o", "--output", metavar="LEDGER", help="ledger to append to")
    parser.add_argument(
        "--settle",
        type=float,
        default=5.0,
        metavar="S",
        help="hold the last call of a file written less than S seconds ago (default 5)",
    )
    add_format_option(parser, help="report format (default: table)", aliases={"text": "table"})
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress on stderr (default: when stderr is a terminal)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from eloledger.agents import importer

    paths = [Path(p).expanduser() for p in args.paths] or importer.default_roots(args.kind)
    ledger = Path(args.output).expanduser() if args.output else importer.default_ledger(args.kind)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    report = importer.import_logs(
        args.kind,
        paths,
        ledger,
        settle_s=args.settle,
        progress=_Progress() if show else None,
    )
    if show:
        print(file=sys.stderr)
    if args.format == "json":
        # tables.to_json's layout; the report holds no floats, so no NaN to null out (and
        # tables costs ~10 ms to import, a thirtieth of a large import)
        print(json.dumps(importer.report_json(report, ledger), indent=2, ensure_ascii=False))
    else:
        from eloledger.tables import terminal_width, wrap

        width = terminal_width()
        for line in importer.describe(report, ledger):
            print(wrap(line, width))  # between words; names and paths from logs escaped
    return 0


class _Progress:
    """Prints "import: 120.0/1024.0 MB" on stderr at most 4 times a second."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.25 and done < total:
            return
        self.last = now
        print(f"\rimport: {done / 1e6:,.1f}/{total / 1e6:,.1f} MB", end="", file=sys.stderr)
