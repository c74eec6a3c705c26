"""Warnings reach the terminal as text: a name from a ledger never as escape sequences, and on
a terminal wrapped between words at its width; piped, one line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from pty_support import run_on_pty

EVIL = "evil\x1b]0;pwned\x07\x1b[2J\x1b]52;c;aGk=\x07"  # retitle, clear, write the clipboard


def ledger_with_an_evil_arm(tmp_path: Path) -> Path:
    rows = []
    for task in range(6):
        for session in range(3):
            base = {"task_id": f"t{task}", "arm": EVIL, "session": str(session), "status": "ok"}
            rows.append({**base, "sample": 0, "total_tokens": 100, "score": 0.5})
            rows.append({**base, "sample": 1, "score": 0.7})  # no usage: a warning names the arm
    path = tmp_path / "evil.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [["curve", "--bootstrap", "5"], ["tokens", "--by", "task,arm"]],
    ids=["curve", "tokens-cross-tab"],
)
def test_an_arm_named_with_escape_sequences_reaches_no_warning_raw(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``curve`` printed the arm's name raw in its warnings (the table escaped it)."""
    path = ledger_with_an_evil_arm(tmp_path)
    assert main([command[0], str(path), *command[1:]]) == 0
    err = capsys.readouterr().err
    assert "eloledger: warning:" in err and "evil" in err
    assert "\x1b" not in err and "\x07" not in err
    assert all(line.startswith("eloledger: warning: ") for line in err.splitlines())  # piped


def test_on_a_terminal_a_warning_wraps_between_words(tmp_path: Path) -> None:
    path = ledger_with_an_evil_arm(tmp_path)
    status, out = run_on_pty(["tokens", str(path)], cols=60, env={"NO_COLOR": "1"}, stderr=True)
    assert status == 0
    lines = [line for line in out.splitlines() if line]
    first = next(i for i, line in enumerate(lines) if line.startswith("eloledger: warning:"))
    assert all(len(line) <= 60 for line in lines[first:]), lines[first:]
    assert lines[first + 1].startswith("  ")  # the warning goes on under its first line
    joined = " ".join(" ".join(lines[first:]).split())
    assert "counted in usage_missing, not in the sums" in joined  # no word cut in two
