"""Zero or missing usage is ``usage_missing`` on every path, the rule ``doctor --ledger``
applies: ``tokens`` and the doctor agree on the same file, and an imported Claude session whose
log says 0 tokens is not a free ok call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from elo_cli import elo_warnings
from eloledger.agents.importer import describe, report_json
from eloledger.doctor.ledger_audit import audit_ledger
from import_support import lines_of, run, write_lines
from runner_cli import env

SAMPLES = Path(__file__).parent.parent / "data/agent-logs/samples"


def _row(n: int, **usage: object) -> dict:
    return {"run_id": "r", "arm": "a", "task_id": f"t{n}", "role": "sample", "status": "ok",
            "model": "m", "ts": float(n), **usage}  # fmt: skip


SHAPES = [
    _row(1, prompt_tokens=10, completion_tokens=5, total_tokens=15, usage_source="server"),
    _row(2, prompt_tokens=0, completion_tokens=0, total_tokens=0, usage_source="server"),
    _row(3, prompt_tokens=0, completion_tokens=4, total_tokens=4),  # no prompt count
    _row(4, completion_tokens=4, total_tokens=4),  # only a total: counted
    _row(5, usage_source="missing"),
    _row(6, prompt_tokens=7, completion_tokens=3, total_tokens=10, usage_source="estimated"),
    {**_row(7, prompt_tokens=0, completion_tokens=0, total_tokens=0), "status": "error"},
]


def test_tokens_and_the_doctor_count_the_same_rows_as_missing(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in SHAPES))
    findings = audit_ledger(ledger)
    doctor = next(f for f in findings if f.code == "ledger.usage_missing")
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
        capture_output=True, text=True, env=env("unused"), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    arm = next(g for g in out["groups"] if g["name"] == "a")
    # rows 2, 3 and 5 have zero or no usage; 1, 4 and 6 (estimated) count; 7 is an error
    assert "3 more have missing or zero usage" in doctor.message, doctor.message
    assert arm["usage_missing"] == 3 and arm["ok"] == 6
    assert arm["total_tokens"] == 29
    assert any("3 ok call(s) have no token usage" in w for w in out["warnings"])


def test_a_zero_usage_claude_session_is_imported_as_missing_usage(tmp_path: Path) -> None:
    lines = lines_of(SAMPLES / "claude-project-session.jsonl")
    for line in lines:
        usage = (line.get("message") or {}).get("usage")
        if isinstance(usage, dict):
            for name in list(usage):
                if name.endswith("_tokens"):
                    usage[name] = 0
    write_lines(tmp_path / "p" / "s.jsonl", lines)
    report, rows = run("claude-code", tmp_path / "p", tmp_path / "l.jsonl")
    assert rows and all(r["usage_source"] == "missing" for r in rows), rows
    assert {r["error_class"] for r in rows} == {"zero_usage"}
    said = "\n".join(describe(report, tmp_path / "l.jsonl"))
    assert f"warning: {len(rows)} calls have zero token usage in the log" in said
    assert report_json(report, tmp_path / "l.jsonl")["usage_missing"] == len(rows)
    findings = audit_ledger(tmp_path / "l.jsonl")
    assert any(f.code == "ledger.usage_missing" for f in findings)


def test_elo_with_a_ledger_warns_of_zero_usage(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    lines = [
        {**_row(i, prompt_tokens=0 if (arm, i) == ("a", 1) else 9, completion_tokens=0
                if (arm, i) == ("a", 1) else 3, total_tokens=0 if (arm, i) == ("a", 1) else 12),
         "arm": arm, "task_id": f"t{i}", "passed": arm == "a"}
        for arm in "ab" for i in (1, 2)
    ]  # fmt: skip
    warnings = elo_warnings(tmp_path, lines, "t1,a,b\nt2,b,a\n")
    assert any(
        w.startswith(f"1 ok call(s) report zero token usage, first at {ledger}:1:")
        for w in warnings
    ), warnings
