"""`eloledger import` on the command line: defaults, reports, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.cli import main
from import_support import SAMPLES, lines_of, place


def test_default_dir_and_default_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    place("codex-rollout.jsonl", tmp_path / ".codex/sessions/2026/12/01/rollout-1.jsonl")
    assert main(["import", "codex", "--settle", "0", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ledger = Path(report["ledger"])
    assert ledger == tmp_path / "data/eloledger/imports/codex.jsonl"
    assert report["calls"] == 3
    assert sum(r["total_tokens"] for r in lines_of(ledger)) == 4040


def test_text_report_names_unknown_shapes_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = place("gemini-chat-session.jsonl", tmp_path / "g/tmp/p/chats/session-1.jsonl")
    with open(log, "a") as fh:
        fh.write('{"id": "x", "type": "gemini", "tokens": {"weird": 3}}\n')
    out_ledger = tmp_path / "l.jsonl"
    argv = ["import", "gemini-cli", str(tmp_path / "g"), "-o", str(out_ledger), "--settle", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "imported 2 calls" in out
    assert (
        f"unknown line shape: gemini message.tokens without token counts ×1 (e.g. {log}:12)" in out
    )


def test_missing_folder_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["import", "claude-code", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nope: no such file or folder" in err and "fix:" in err


def test_bad_inspect_log_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "x.eval"
    bad.write_bytes(b"not a zip")
    assert main(["import", "inspect", str(bad), "-o", str(tmp_path / "l.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "x.eval: not an inspect_ai log" in err and "Traceback" not in err


def test_real_subprocess_then_tokens(tmp_path: Path) -> None:
    place("claude-project-session.jsonl", tmp_path / "c/projects/-w/s.jsonl")
    ledger = tmp_path / "l.jsonl"
    cmd = [sys.executable, "-m", "eloledger", "import", "claude-code", str(tmp_path / "c")]
    done = subprocess.run(
        [*cmd, "-o", str(ledger), "--settle", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "imported 2 calls" in done.stdout
    tokens = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    groups = json.loads(tokens.stdout)["groups"]
    assert sum(g["total_tokens"] for g in groups) == 2234 + 3336
    assert SAMPLES.exists()
