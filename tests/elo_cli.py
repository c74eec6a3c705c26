"""Run the real ``eloledger elo COMPARISONS --ledger LEDGER --format json`` on rows a test
writes, and return its warnings: the ledger warnings tests share this."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from runner_cli import env


def elo_warnings(folder: Path, rows: list[dict[str, Any]], comparisons: str) -> list[str]:
    ledger = folder / "l.jsonl"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = folder / "c.csv"
    table.write_text("task_id,winner,loser\n" + comparisons)
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "elo", str(table), "--ledger", str(ledger),
         "--intervals", "none", "--format", "json"],
        capture_output=True, text=True, env=env("unused"), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["warnings"]
