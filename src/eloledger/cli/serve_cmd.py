"""`eloledger serve`: the app (or `watch LEDGER`) in a browser, through textual-serve.

Each browser tab gets its own app process, started with ``exec`` so that the process the
server talks to is the app itself (no shell in between to outlive it); the app ends when its
tab goes (the server sends "quit" and closes its input), when the server stops (its input
hangs up) and on SIGTERM/SIGHUP (``tui.lifetime``). textual-serve has no authentication, so
it listens on 127.0.0.1 unless told otherwise; from another machine, reach it through SSH.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from eloledger.cli.warn import warn
from eloledger.errors import UserError

EPILOG = """\
examples:
  eloledger serve                               the app at http://127.0.0.1:8000
  eloledger serve --watch runs/exp.ledger.jsonl the Run view following a ledger
  eloledger serve --port 8123 --theme eloledger-light

from another machine (the server has no password, so keep it on 127.0.0.1):
  ssh -N -L 8000:127.0.0.1:8000 user@box        then open http://127.0.0.1:8000 here

Each browser tab runs its own app; closing the tab ends it. ctrl+c stops the server and every
app it started. Needs the 'web' extra: pip install 'eloledger[web]' (textual-serve).
"""
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "serve",
        help="the app (or watch LEDGER) in a browser, on 127.0.0.1",
        description="Serve the terminal app to a browser through textual-serve.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (8000)")
    parser.add_argument("--watch", metavar="LEDGER", help="serve `eloledger watch LEDGER`")
    parser.add_argument(
        "--from-end", action="store_true", help="with --watch: count only rows written from now"
    )
    parser.add_argument("--theme", help="theme name")
    parser.set_defaults(handler=handle)


def app_command(args: argparse.Namespace) -> str:
    """The shell command the server runs per browser tab (``exec``: no shell left behind)."""
    argv = [sys.executable, "-m", "eloledger"]
    if args.watch:
        from eloledger.cli.watch_cmd import check_ledger_path

        argv += ["watch", str(check_ledger_path(Path(args.watch)).resolve())]
        if args.from_end:
            argv.append("--from-end")
    else:
        if args.from_end:
            raise UserError("--from-end needs --watch LEDGER", fix="add --watch LEDGER")
        argv.append("tui")
    if args.theme:
        argv += ["--theme", args.theme]
    return "exec " + shlex.join(argv)


def handle(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise UserError(f"--port {args.port}: not a port", fix="use 1-65535, e.g. --port 8000")
    command = app_command(args)
    try:
        from eloledger.tui.web import AppServer
    except ImportError:
        raise UserError(
            "serve needs textual-serve, which is not installed",
            fix="pip install 'eloledger[web]'",
        ) from None
    if args.host not in LOOPBACK:
        warn(
            f"listening on {args.host}: anyone who reaches it drives the app (textual-serve "
            "has no password); prefer 127.0.0.1 and an SSH tunnel"
        )
    title = f"eloledger watch {Path(args.watch).name}" if args.watch else "eloledger"
    AppServer(command, host=args.host, port=args.port, title=title).serve()
    return 0
