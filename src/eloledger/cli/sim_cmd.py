"""`eloledger sim`: placeholder until its issue lands (owned by the helper building it)."""

from __future__ import annotations

import argparse

from eloledger.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sim", help="(not built yet)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    raise UserError("'eloledger sim' is not built yet")
