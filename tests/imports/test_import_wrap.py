"""`eloledger import` prints its report in whole words at the terminal's width (80 columns:
the ledger's path had been cut in two by the terminal, "claude" / "-code.jsonl")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from import_support import SAMPLES


def test_the_report_wraps_between_words(tmp_path: Path) -> None:
    logs = tmp_path / "projects" / "p"
    logs.mkdir(parents=True)
    (logs / "s.jsonl").write_bytes((SAMPLES / "claude-project-session.jsonl").read_bytes())
    ledger = tmp_path / "some-long-folder-name" / "imports" / "claude-code.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "import", "claude-code", str(tmp_path), "-o",
         str(ledger), "--settle", "0"],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("imported ")
    for line in lines:
        assert len(line) <= 80 or " " not in line.strip(), line  # only a lone long word runs over
    assert str(ledger) in done.stdout.split()  # the path whole, never cut
