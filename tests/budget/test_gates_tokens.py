"""`eloledger tokens`: p50/p95 latency per arm, --split/--tag/--tasks (item 1)
and the LLM judge's calls as their own group so a bill reconciles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.ledger import LedgerWriter


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "l.jsonl"
    with LedgerWriter(path) as writer:
        for t in range(20):
            for arm, base in (("a", 100.0), ("b", 1000.0)):
                writer.append({
                    "task_id": f"t{t}", "arm": arm, "role": "sample", "prompt_tokens": 10,
                    "completion_tokens": 5, "latency_ms": base + t,  # 100..119 / 1000..1019
                    "split": "test" if t < 5 else "val", "tags": ["math"] if t % 2 else ["code"],
                })  # fmt: skip
                writer.append({
                    "task_id": f"t{t}", "arm": arm, "role": "judge", "prompt_tokens": 300,
                    "completion_tokens": 7, "latency_ms": 5000.0,
                })  # fmt: skip
    return path


def tokens(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["tokens", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_latency_percentiles_per_arm(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    groups = {g["name"]: g for g in tokens(capsys, str(ledger))["groups"]}
    assert groups["a"]["latency_p50_ms"] == pytest.approx(109.5)
    assert groups["a"]["latency_p95_ms"] == pytest.approx(118.05)
    assert groups["b"]["latency_p95_ms"] == pytest.approx(1018.05)  # judge calls not in it
    assert main(["tokens", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert "p95 ms" in out.splitlines()[0]


def test_judge_calls_are_their_own_group(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tokens(capsys, str(ledger))
    assert sum(g["total_tokens"] for g in data["groups"]) == 40 * 15
    assert data["judge"]["calls"] == 40 and data["judge"]["total_tokens"] == 40 * 307
    assert data["billed_total_tokens"] == 40 * 15 + 40 * 307
    assert main(["tokens", str(ledger)]) == 0
    captured = capsys.readouterr()
    lines = {line.split()[0]: line for line in captured.out.splitlines() if line.strip()}
    assert "12,280" in lines["JUDGE"] and "12,880" in lines["BILLED"]
    assert "LLM judge made 40 call(s)" in captured.err


def test_no_judge_no_judge_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"task_id": "t", "arm": "a", "total_tokens": 3}) + "\n")
    data = tokens(capsys, str(path))
    assert data["judge"] is None and data["billed_total_tokens"] == 3
    assert data["groups"][0]["latency_p95_ms"] is None


def test_split_and_tag_select_rows(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    groups = {g["name"]: g for g in tokens(capsys, str(ledger), "--split", "test")["groups"]}
    assert groups["a"]["calls"] == 5 and groups["a"]["latency_p95_ms"] == pytest.approx(103.8)
    groups = {g["name"]: g for g in tokens(capsys, str(ledger), "--tag", "math")["groups"]}
    assert groups["a"]["calls"] == 10
    both = tokens(capsys, str(ledger), "--tag", "math", "--split", "test")["groups"]
    assert {g["name"]: g["calls"] for g in both} == {"a": 2, "b": 2}  # t1, t3


def test_tasks_file_attaches_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bare.jsonl"
    path.write_text("".join(
        json.dumps({"case_id": f"c{i}", "strategy": "a", "total_tokens": 10}) + "\n"
        for i in range(6)
    ))  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"case_id": f"c{i}", "split": "test" if i < 2 else "train"}) + "\n"
        for i in range(6)
    ))  # fmt: skip
    data = tokens(capsys, str(path), "--split", "test", "--tasks", str(tasks))
    assert data["groups"][0]["calls"] == 2
    assert main(["tokens", str(path), "--split", "test"]) == 2
    assert "--tasks FILE" in capsys.readouterr().err
