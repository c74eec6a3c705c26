"""`eloledger serve` refuses bad input in one line before it listens, and the command it runs
per browser tab is the app itself (``exec``: no shell left behind to outlive it)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.cli.serve_cmd import app_command


def args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**({"watch": None, "from_end": False, "theme": None} | given))


def test_the_tab_command_execs_the_app(tmp_path: Path) -> None:
    ledger = tmp_path / "a run.jsonl"  # a space: quoted, not split
    ledger.write_text("", encoding="utf-8")
    command = app_command(args(watch=str(ledger), from_end=True, theme="eloledger-light"))
    assert command.startswith("exec ")
    assert shlex.split(command)[1:] == [sys.executable, "-m", "eloledger", "watch",
                                        str(ledger.resolve()), "--from-end", "--theme",
                                        "eloledger-light"]  # fmt: skip
    assert shlex.split(app_command(args()))[-1] == "tui"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["serve", "--from-end"], "--from-end needs --watch LEDGER"),
        (["serve", "--watch", "/no/such/folder/x.jsonl"], "no such file or folder"),
        (["serve", "--port", "70000"], "--port 70000: not a port"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2
