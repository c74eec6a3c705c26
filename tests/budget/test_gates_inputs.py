"""The guide's own ledger format, and several ledgers in the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.budget.sampling_sim import four_arms
from eloledger.cli import main
from eloledger.ledger import LedgerWriter

ARGS = ["--old-1", "old_1", "--new-1", "new_1", "--old-n", "old_n", "--new-n", "new_n"]


def test_table_with_one_ledger_per_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The common layout: the old arms' spec wrote one ledger, the new arms' another."""
    rows = four_arms(n_old=4, n_new=16, tasks=60, seed=4)
    paths = []
    for side in ("old", "new"):
        path = tmp_path / f"{side}.jsonl"
        with LedgerWriter(path) as writer:
            for row in rows:
                if row["arm"].startswith(side):
                    writer.append(row)
        paths.append(path)
    code = main(["fairness", *map(str, paths), *ARGS, "--bootstrap", "100", "--format", "table"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("verdict: ")
    assert "2 ledgers sha256 " in out


def _guide_rows(tasks: int = 40) -> list[dict]:
    """Rows as the budget-fairness guide writes them: case_id, strategy, n, request_tokens,
    response_tokens, judge_score, ISO-8601 timestamp, experiment_id (no passed)."""
    rows = []
    for arm, n, solved in (("base_1", 1, 10), ("cand_1", 1, 30), ("base_8", 8, 20), ("cand_8", 8, 30)):
        for i in range(tasks):
            for s in range(n):
                ok = i < solved
                rows.append({
                    "experiment_id": "exp-7", "case_id": f"c{i}", "strategy": arm, "n": n,
                    "sample": s, "request_tokens": 100, "response_tokens": 50,
                    "judge_score": 1.0 if ok else 0.0,
                    "timestamp": f"2026-11-{10 + i % 3:02d}T23:30:00Z", "latency_ms": 200,
                })  # fmt: skip
    return rows


@pytest.fixture
def guide(tmp_path: Path) -> Path:
    path = tmp_path / "guide.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _guide_rows()))
    return path


def test_guide_format_in_fairness(guide: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--old-1", "base_1", "--new-1", "cand_1", "--old-n", "base_8", "--new-n", "cand_8"]
    assert main(["fairness", str(guide), *args, "--bootstrap", "200", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["tasks"]["used"] == 40
    assert record["arms"]["old_1"]["pass_rate"] == pytest.approx(0.25)
    assert record["arms"]["new_1"]["pass_rate"] == pytest.approx(0.75)
    assert record["verdict"] == "real_evolution"


def test_guide_format_in_tokens_by_day(guide: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", str(guide), "--by", "day", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    days = {g["name"]: g for g in data["groups"]}
    assert sorted(days) == ["2026-11-10", "2026-11-11", "2026-11-12"]
    assert sum(g["calls"] for g in days.values()) == 40 * 18
    assert sum(g["total_tokens"] for g in days.values()) == 40 * 18 * 150  # request+response


def test_timestamp_with_offset_and_bad_timestamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eloledger.ledger.canonical import canonicalize

    row = canonicalize({"case_id": "a", "timestamp": "2026-11-30T01:00:00+02:00"}, where="x:1")
    assert row["ts"] == 1795993200.0  # 2026-11-29T23:00:00Z
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"case_id": "a", "strategy": "x", "timestamp": "yesterday"}) + "\n")
    assert main(["tokens", str(bad), "--by", "day"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1" in err and "timestamp" in err and "Traceback" not in err
