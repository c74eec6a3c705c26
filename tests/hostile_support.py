"""Shared by the hostile-input tests: run the CLI in-process and check a one-line refusal."""

from __future__ import annotations

import pytest

from eloledger.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``eloledger ARGV`` run in this process."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(status: int, err: str, *names: str) -> None:
    """Exit 2, no traceback, exactly one ``eloledger: error:`` line naming every ``names``
    (warnings may come before it)."""
    assert status == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("eloledger: error:")]
    assert len(lines) == 1 and err.endswith(lines[0] + "\n"), err
    for name in names:
        assert name in lines[0], (name, err)
