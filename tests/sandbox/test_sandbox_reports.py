"""Scores judged with ``[judge] sandbox = "none"`` are flagged loudly in every report face:
``elo --ledger`` (its warnings), the fairness record (same outcomes) and the TUI's Elo tab."""

from __future__ import annotations

import json
from pathlib import Path

from eloledger.budget.outcomes import ledger_outcomes
from eloledger.tui.elo_tab import loud_warnings


def _ledger(path: Path, sandbox: str) -> Path:
    rows = []
    for task in ("t1", "t2"):
        for arm, passed in (("one", True), ("two", False)):
            rows.append(
                {"v": 1, "task_id": task, "arm": arm, "session": 0, "sample": 0, "role": "sample",
                 "status": "ok", "prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10,
                 "usage_source": "server", "score": float(passed), "passed": passed,
                 "sandbox": sandbox if arm == "two" else "bwrap", "ts": 1.0}
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_an_unsandboxed_arm_is_named_loudly(tmp_path: Path) -> None:
    _, warnings = ledger_outcomes(str(_ledger(tmp_path / "l.jsonl", "none")))
    loud = [w for w in warnings if w.startswith("UNSANDBOXED")]
    assert len(loud) == 1 and loud[0].endswith(": two"), warnings
    # the TUI keeps it on screen (not only in a toast)
    assert "UNSANDBOXED" in loud_warnings(warnings)


def test_sandboxed_rows_raise_no_flag(tmp_path: Path) -> None:
    _, warnings = ledger_outcomes(str(_ledger(tmp_path / "l.jsonl", "bwrap")))
    assert not [w for w in warnings if "UNSANDBOXED" in w]
    assert "UNSANDBOXED" not in loud_warnings(warnings)
