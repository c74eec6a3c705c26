"""The headless face: parse arguments, call the core, print. No logic of its own.

Each command lives in its own module with a ``register(subparsers)`` function that adds its
parser and sets ``handler``; core modules are imported inside the handlers so that
``eloledger --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from eloledger import __version__
from eloledger.cli import (
    audit_cmd,
    curve_cmd,
    demo_cmd,
    doctor_cmd,
    elo_cmd,
    env_cmd,
    fairness_cmd,
    history_cmd,
    import_cmd,
    profile_cmd,
    run_cmd,
    sim_cmd,
    tokens_cmd,
    tui_cmd,
    watch_cmd,
)
from eloledger.errors import UserError
from eloledger.redact import scrub
from eloledger.textsafe import visible

COMMANDS = (
    tui_cmd,
    watch_cmd,
    demo_cmd,
    run_cmd,
    tokens_cmd,
    import_cmd,
    elo_cmd,
    curve_cmd,
    fairness_cmd,
    history_cmd,  # issue 20 item 8: run index
    audit_cmd,
    doctor_cmd,
    profile_cmd,
    env_cmd,
    sim_cmd,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line instead of the usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="eloledger",
        description="Token ledger, gateway doctor, profile switcher and Elo-per-token analysis.",
        epilog="Run 'eloledger' with no command to open the terminal app.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"eloledger {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        handler = tui_cmd.run_app
    try:
        status = handler(args)
    except UserError as exc:
        print(f"eloledger: error: {visible(scrub(exc.one_line()))}", file=sys.stderr)
        return UserError.exit_status
    except KeyboardInterrupt:
        print("eloledger: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return int(status or 0)
