"""Every command's ``--help`` fits an 80-column terminal and keeps one --format vocabulary."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from eloledger.cli import COMMAND_NAMES, build_parser, iter_parsers
from eloledger.cli.options import FORMATS


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    return [(" ".join(path), parser) for path, parser in iter_parsers(build_parser())]


@pytest.mark.parametrize("name, parser", _parsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_help_fits_80_columns(name: str, parser: argparse.ArgumentParser, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    long = [line for line in out.getvalue().splitlines() if len(line) > 80]
    assert not long, f"eloledger {name} --help: {long[:3]}"


def test_every_format_option_uses_the_one_vocabulary() -> None:
    seen = 0
    for name, parser in _parsers():
        for action in parser._actions:
            if "--format" in action.option_strings:
                seen += 1
                assert set(action.choices) <= set(FORMATS), (name, action.choices)
                assert list(action.choices) == [f for f in FORMATS if f in action.choices], name
    assert seen >= len(COMMAND_NAMES) // 2  # the check saw the commands that print reports
