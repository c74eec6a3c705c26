"""The headless face: parse arguments, call the core, print. No logic of its own.

Each command lives in its own module with a ``register(subparsers)`` function that adds its
parser and sets ``handler``; core modules are imported inside the handlers so that
``eloledger --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

from eloledger import __version__
from eloledger.errors import UserError
from eloledger.redact import scrub
from eloledger.textsafe import visible

# The command modules, in the order of the help; imported when a parser is built.
COMMAND_NAMES = (
    "tui_cmd",
    "watch_cmd",
    "serve_cmd",
    "demo_cmd",
    "run_cmd",
    "tokens_cmd",
    "import_cmd",
    "elo_cmd",
    "curve_cmd",
    "fairness_cmd",
    "history_cmd",
    "audit_cmd",
    "doctor_cmd",
    "profile_cmd",
    "env_cmd",
    "sim_cmd",
)


def _command(name: str) -> ModuleType:
    return importlib.import_module(f"eloledger.cli.{name}")


def __getattr__(name: str) -> object:
    """``cli.COMMANDS`` and ``cli.<name>_cmd`` as before, imported on first use."""
    if name == "COMMANDS":
        return tuple(_command(n) for n in COMMAND_NAMES)
    if name in COMMAND_NAMES:
        return _command(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line instead of the usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser(only: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``: module names) one with just those commands."""
    parser = _Parser(
        prog="eloledger",
        description="Token ledger, gateway doctor, profile switcher and Elo-per-token analysis.",
        epilog="Run 'eloledger' with no command to open the terminal app.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"eloledger {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_NAMES if only is None else only:
        _command(name).register(sub)
    _wrap_help(parser)
    return parser


def iter_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """``(command path, parser)`` for the parser and every command and sub-command below it:
    ``()``, ``("run",)``, ``("profile", "add")``..."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from iter_parsers(child, (*path, name))


def _wrap_help(parser: argparse.ArgumentParser) -> None:
    """Every command's (and sub-command's) help wraps to the terminal between words."""
    from eloledger.cli.helpformat import WrappedHelpFormatter

    for path, child in iter_parsers(parser):
        if path:
            child.formatter_class = WrappedHelpFormatter


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    # A command names its module (`import` -> import_cmd): only its parser is built, since the
    # other modules cost ~60 ms to import (a large import is ~0.3 s in all). Anything else
    # (--help, no command, a typo) gets the whole parser and its messages.
    module = f"{words[0]}_cmd" if words else ""
    parser = build_parser((module,) if module in COMMAND_NAMES else None)
    args = parser.parse_args(words)
    handler = getattr(args, "handler", None)
    if handler is None:
        handler = _command("tui_cmd").run_app
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
