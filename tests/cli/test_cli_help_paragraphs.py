"""Help prose written wrapped at the source's width is filled again at 80 columns; examples,
table rows and the author's own line breaks keep their layout."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from eloledger.cli import build_parser, iter_parsers
from eloledger.cli.helpformat import WrappedHelpFormatter, paragraphs

WRAPPED_AT_40 = """\
Sum the tokens in one or several ledgers
per arm, task or model.
A torn last line is skipped.
Field names from other tools are read.
examples:
  eloledger tokens runs/ledger.jsonl
  eloledger tokens runs/   # every ledger
columns:
  pass@k   unbiased pass@k, k = samples
           per session"""


def test_a_wrapped_sentence_joins_and_a_finished_short_one_ends_its_paragraph() -> None:
    blocks = paragraphs(WRAPPED_AT_40.splitlines())
    assert blocks == [
        ["Sum the tokens in one or several ledgers", "per arm, task or model."],
        ["A torn last line is skipped."],  # short and finished: the author's break
        ["Field names from other tools are read."],
        ["examples:"],
        ["  eloledger tokens runs/ledger.jsonl"],  # two examples never become one
        ["  eloledger tokens runs/   # every ledger"],
        ["columns:"],
        ["  pass@k   unbiased pass@k, k = samples", "           per session"],  # a cell's 2 lines
    ]


def _help(parser: argparse.ArgumentParser, columns: int, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    return out.getvalue()


def _parser(name: str) -> argparse.ArgumentParser:
    return dict((" ".join(path), p) for path, p in iter_parsers(build_parser()))[name]


def test_tokens_help_at_80_columns_reads_as_paragraphs_without_stubs(monkeypatch) -> None:
    text = _help(_parser("tokens"), 80, monkeypatch)
    description = text.split("\n\n")[1].splitlines()
    # Before, each 100-column source line was wrapped alone: "project, source or" then "run".
    assert description[1].startswith("project, source or run (run_id)"), description[:3]
    pairs = zip(description, description[1:], strict=False)
    stubs = [a for a, b in pairs if len(a) < 50 and b[:1].islower()]
    assert not stubs, stubs
    assert "  eloledger tokens runs/shard-*.jsonl             # shards of one run, merged" in text


def test_an_examples_comment_wraps_in_its_own_column(monkeypatch) -> None:
    text = _help(_parser("serve"), 80, monkeypatch).splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith("  eloledger serve   "))
    comment = text[at].index("the app at")
    assert text[at + 1].strip() == "http://127.0.0.1:8000"
    assert text[at + 1].index("http") == comment  # under the comment, not under the command


def test_help_that_fits_is_printed_exactly_as_written(monkeypatch) -> None:
    parser = argparse.ArgumentParser(
        prog="x", description=WRAPPED_AT_40, formatter_class=WrappedHelpFormatter
    )
    assert WRAPPED_AT_40 in _help(parser, 80, monkeypatch)
