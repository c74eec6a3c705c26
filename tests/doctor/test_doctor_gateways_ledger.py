"""The ledger audit: counts that disagree with the provider's are
flagged, and the advice for estimated usage does not tell the user to enable what eloledger
already sends."""

from __future__ import annotations

import json
from pathlib import Path

from eloledger.doctor.ledger_audit import audit_ledger

ROW = {"run_id": "r", "task_id": "t", "arm": "a", "model": "m", "status": "ok",
       "prompt_tokens": 22, "completion_tokens": 5, "total_tokens": 27}  # fmt: skip


def _ledger(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "ledger.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rows_whose_counts_disagree_with_the_providers_are_flagged(tmp_path: Path) -> None:
    rows = [
        ROW | {"sample": 0, "usage_check": "agree"},
        ROW | {"sample": 1, "usage_check": "disagree"},
    ]
    findings = {f.code: f for f in audit_ledger(_ledger(tmp_path, rows))}
    assert "ledger.usage_disagree" in findings
    assert "line 2" in findings["ledger.usage_disagree"].evidence
    assert findings["ledger.usage_disagree"].severity == "warning"
    clean = [ROW | {"sample": 0, "usage_check": "agree"}]
    assert "ledger.usage_disagree" not in {f.code for f in audit_ledger(_ledger(tmp_path, clean))}


def test_estimated_usage_advice_does_not_say_enable_include_usage(tmp_path: Path) -> None:
    rows = [ROW | {"usage_source": "estimated"}]
    finding = next(
        f for f in audit_ledger(_ledger(tmp_path, rows)) if f.code == "ledger.usage_missing"
    )
    assert "enable stream_options.include_usage" not in finding.fix
    assert "already" in finding.fix
