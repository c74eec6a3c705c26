"""Every field the writers write is in the ledger reference (eloledger.ledger.schema's field
table, which makes docs/ledger-reference.md), of the type LedgerRow declares, and reads back as
written: the demo's chat rows, and imports of logs the real CLIs wrote. Judge rows are checked
on the LLM-judged run of tests/judges/test_judges_rows_per_arm_sums.py, and the agent runner's
session, call and checkpoint rows on the run with checkpoints of
tests/runner/test_runner_checkpoints.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from row_contract import assert_reads_back_as_written

from eloledger.agents.importer import import_logs
from eloledger.ledger.schema import undocumented

REAL = Path(__file__).resolve().parents[1] / "data" / "agent-logs" / "real"


def test_the_demos_rows_are_all_described(demo_run) -> None:
    rows = [json.loads(x) for x in demo_run.ledger.read_text().splitlines() if x.strip()]
    assert rows and not undocumented(rows)
    assert_reads_back_as_written(demo_run.ledger)


@pytest.mark.parametrize(("kind", "folder"), [
    ("claude-code", REAL / "claude-code" / "projects"),
    ("codex", REAL / "codex" / "sessions"),
    ("gemini-cli", REAL / "gemini-cli" / "tmp"),
])  # fmt: skip
def test_imported_rows_are_all_described(kind: str, folder: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "imported.jsonl"
    import_logs(kind, [folder], ledger, settle_s=0.0)
    rows = [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()]
    assert rows
    assert not undocumented(rows)
    assert_reads_back_as_written(ledger)
