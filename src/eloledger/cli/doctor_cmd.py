"""`eloledger doctor`: placeholder until its issue lands (owned by the helper building it)."""

from __future__ import annotations

import argparse

from eloledger.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("doctor", help="(not built yet)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    raise UserError("'eloledger doctor' is not built yet")
