"""`eloledger` / `eloledger tui`: open the terminal app (Profiles | Run | Doctor | Elo)."""

from __future__ import annotations

import argparse

EPILOG = """\
examples:
  eloledger                      open the app (same as 'eloledger tui')
  eloledger tui --theme eloledger-light
  NO_COLOR=1 eloledger           monochrome
  eloledger watch run.jsonl      the Run tab following a ledger another process writes

keys: 1-4 switch tabs, h run history, ctrl+p command palette, F1 help, q (or ctrl+q) quit.
in a browser: eloledger serve (see eloledger serve --help).
themes: data files in the package's themes/ folder and in
  ~/.config/eloledger/themes/ (platformdirs user config dir); ELOLEDGER_THEME picks one.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tui",
        help="open the terminal app (the default when no command is given)",
        description="Open the terminal app: Profiles | Run | Doctor | Elo, keyboard-only.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--theme",
        help="theme name (e.g. eloledger-dark, eloledger-light, "
        "eloledger-high-contrast, or one of your own)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return run_app(args)


def run_app(args: argparse.Namespace) -> int:
    """Open the app; also the dispatcher's default when no command is given."""
    from eloledger.tui.app import run_tui

    return run_tui(theme=getattr(args, "theme", None))
