"""Ledger audit: the rows that would make token counts or Elo-per-token wrong, named by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.doctor.ledger_audit import audit_ledger
from eloledger.errors import UserError

ROW = {
    "run_id": "r1",
    "task_id": "t1",
    "arm": "single",
    "sample": 0,
    "model": "gpt-4o",
    "status": "ok",
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "total_tokens": 15,
    "base_url": "https://gw.example/v1",
}


def _ledger(tmp_path: Path, rows: list, tail: str = "") -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail)
    return path


def _codes(findings: list) -> set[str]:
    return {f.code for f in findings}


def test_clean_ledger_with_aliases_and_nested_usage(tmp_path: Path) -> None:
    rows = [
        ROW,
        {
            **ROW,
            "sample": 1,
            "prompt_tokens": None,
            "completion_tokens": None,
            "total_tokens": None,
            "usage": {"input_tokens": 7, "output_tokens": 3},
        },
        {
            "run_id": "r1",
            "task": "t2",
            "strategy": "single",
            "sample": 0,
            "model": "gpt-4o",
            "status": "ok",
            "input_tokens": 4,
            "output_tokens": 2,
        },
        # reasoning counted outside completion: total = p + c + r is consistent
        {**ROW, "sample": 2, "reasoning_tokens": 20, "total_tokens": 35},
    ]
    assert audit_ledger(_ledger(tmp_path, rows), expect_models=["gpt-4o"]) == []
    # estimated usage is not clean: see test_ledger_estimated.py


def test_dated_model_variant_is_the_same_model(tmp_path: Path) -> None:
    rows = [
        ROW,
        {**ROW, "sample": 1, "model": "gpt-4o-2024-08-06"},
        {**ROW, "sample": 2, "model": "openai/gpt-4o"},
        {**ROW, "sample": 3, "model": "gpt-4o-mini"},
    ]
    findings = audit_ledger(_ledger(tmp_path, rows), expect_models=["gpt-4o"])
    # gpt-4o-mini starts with "gpt-4o-": a prefix match is deliberately lenient
    assert _codes(findings) == set()
    findings = audit_ledger(_ledger(tmp_path, rows), expect_models=["gpt-4o-2024-08-06"])
    unknown = [f for f in findings if f.code == "ledger.unknown_model"][0]
    assert "lines 1, 3" in unknown.evidence or "line 1" in unknown.evidence


def test_usage_missing_reports_count_and_lines(tmp_path: Path) -> None:
    rows = [ROW] + [
        {**ROW, "sample": i, "prompt_tokens": None, "completion_tokens": None, "total_tokens": None}
        for i in range(1, 9)
    ]
    finding = audit_ledger(_ledger(tmp_path, rows))[0]
    assert finding.code == "ledger.usage_missing" and finding.severity == "error"
    assert finding.message.startswith("8 of 9 ok rows")
    assert finding.evidence.endswith("lines 2, 3, 4, 5, 6 (+3 more)")


def test_error_rows_are_not_usage_missing_and_retries_are_counted(tmp_path: Path) -> None:
    rows = [
        ROW,
        {
            **ROW,
            "sample": 1,
            "status": "error",
            "error_class": "RateLimitError",
            "will_retry": True,
            "prompt_tokens": None,
            "total_tokens": None,
        },
        {
            **ROW,
            "sample": 1,
            "attempt": 2,
            "status": "error",
            "error_class": "RateLimitError",
            "prompt_tokens": None,
            "total_tokens": None,
        },
    ]
    findings = audit_ledger(_ledger(tmp_path, rows))
    assert _codes(findings) == {"ledger.errors"}
    assert "(1 final, 1 retried): RateLimitError x2" in findings[0].message


def test_duplicate_by_identity_even_with_different_timestamps(tmp_path: Path) -> None:
    rows = [{**ROW, "ts": 1.0}, {**ROW, "ts": 2.0}, {**ROW, "sample": 1, "ts": 3.0}]
    finding = audit_ledger(_ledger(tmp_path, rows))[0]
    assert finding.code == "ledger.duplicate"
    assert finding.evidence.endswith("line 2 repeats line 1")


def test_two_base_urls_in_one_run_but_not_across_runs(tmp_path: Path) -> None:
    rows = [ROW, {**ROW, "run_id": "r2", "base_url": "https://other.example/v1"}]
    assert audit_ledger(_ledger(tmp_path, rows)) == []
    rows.append({**ROW, "sample": 5, "base_url": "https://other.example/v1"})
    finding = audit_ledger(_ledger(tmp_path, rows))[0]
    assert finding.code == "ledger.base_urls" and "run r1" in finding.message


def test_torn_last_line_is_a_warning_not_an_error(tmp_path: Path) -> None:
    warnings: list[str] = []
    path = _ledger(tmp_path, [ROW], tail='{"run_id": "r1", "task_id": "t1", "stat')
    assert audit_ledger(path, warn=warnings.append) == []
    assert warnings and ":2: skipped a torn last line" in warnings[0]  # the reader's words


def test_malformed_middle_line_is_a_user_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROW) + "\n{oops\n" + json.dumps(ROW) + "\n")
    with pytest.raises(UserError, match=r"bad\.jsonl:2"):
        audit_ledger(path)
    with pytest.raises(UserError, match="no such ledger"):
        audit_ledger(tmp_path / "missing.jsonl")
