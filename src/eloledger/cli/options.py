"""Option groups several commands share, defined once so they read and behave the same.

One ``--format`` vocabulary (``table`` for people, ``json`` for programs, ``csv``/``md`` where
rows make sense), the interval methods and how ``--intervals`` and ``--bootstrap`` combine,
one ``--wide`` and one row selection.
"""

from __future__ import annotations

import argparse

from eloledger.errors import UserError

FORMATS = ("table", "json", "csv", "md")
INTERVALS = ("sandwich", "bootstrap", "none")


def add_format_option(
    parser: argparse.ArgumentParser,
    formats: tuple[str, ...] = ("table", "json"),
    *,
    default: str | None = "table",
    help: str | None = None,
    aliases: dict[str, str] | None = None,
) -> None:
    """``--format`` with a subset of :data:`FORMATS`, in that order; ``aliases`` maps an old
    spelling a command once took (import's ``text``) onto the vocabulary."""
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"not in the --format vocabulary: {sorted(unknown)}")
    ordered = tuple(f for f in FORMATS if f in formats)
    parser.add_argument(
        "--format",
        choices=ordered,
        type=lambda value: (aliases or {}).get(value, value),
        default=default,
        help=help or f"output format (default: {default})",
    )


def add_wide_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wide",
        action="store_true",
        help="every column in the table, however wide (default: fit the terminal)",
    )


def add_selection_args(parser: argparse.ArgumentParser) -> None:
    """--split / --tag / --tasks: the rows a reader uses."""
    parser.add_argument("--split", metavar="NAME", help="only rows of this split (train/val/test)")
    parser.add_argument(
        "--tag", metavar="NAME", action="append", help="only rows with this tag (repeatable)"
    )
    parser.add_argument(
        "--tasks",
        metavar="FILE",
        help="tasks file (JSONL) whose split/tags attach to ledger rows that lack them",
    )


def interval_method(args: argparse.Namespace) -> str:
    """--intervals, else what --bootstrap N implies (the old spelling), else the sandwich."""
    chosen = getattr(args, "intervals", None)
    rounds = getattr(args, "bootstrap", None)
    if chosen is None:
        if rounds is None:
            return "sandwich"
        return "bootstrap" if rounds > 0 else "none"
    if chosen != "bootstrap" and rounds:
        raise UserError(
            f"--bootstrap {rounds} contradicts --intervals {chosen}",
            fix="drop --bootstrap, or use --intervals bootstrap",
        )
    return chosen
