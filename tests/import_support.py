"""Helpers for the import tests: fixtures from real CLI logs, run an import, read its rows."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from eloledger.agents.importer import import_logs
from eloledger.agents.logscan import ScanReport

DATA = Path(__file__).parent / "data" / "agent-logs"
SAMPLES = DATA / "samples"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_lines(path: Path, rows: list[dict[str, Any]], *, mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode) as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return path


def place(sample: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / sample, dest)
    return dest


def run(kind: str, root: Path, ledger: Path, **kw: Any) -> tuple[ScanReport, list[dict]]:
    kw.setdefault("settle_s", 0.0)
    report = import_logs(kind, [root], ledger, **kw)
    rows = lines_of(ledger) if ledger.exists() else []
    return report, rows


def totals_by_session(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        for field in ("prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens"):
            out[row["session"]][field] += row[field]
        out[row["session"]]["calls"] += 1
    return {k: dict(v) for k, v in out.items()}
