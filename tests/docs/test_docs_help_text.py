"""`--help` speaks to the user: no project history ("issue 22") in any command's help."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from eloledger.cli import build_parser, iter_parsers

ISSUE = re.compile(r"\bissues?\s*#?\d+", re.IGNORECASE)


def helps(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    for path, sub in iter_parsers(parser):
        yield " ".join(("eloledger", *path)), sub.format_help()


def test_no_help_text_names_an_issue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per sentence, so a match is not split
    found = [
        f"{path}: {line.strip()}"
        for path, text in helps(build_parser())
        for line in text.splitlines()
        if ISSUE.search(line)
    ]
    assert not found, "\n".join(found)


def test_every_command_is_read() -> None:
    paths = {path for path, _ in helps(build_parser())}
    assert {"eloledger watch", "eloledger curve", "eloledger profile add"} <= paths
