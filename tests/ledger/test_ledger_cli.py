"""`eloledger tokens`: the JSON contract, CSV/table/Markdown output and exit 2 on bad input."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.cli import main

ROWS = [
    {"arm": "single", "task_id": "t1", "prompt_tokens": 60, "completion_tokens": 40},
    {"arm": "single", "task_id": "t2", "total_tokens": 300},
    {"strategy": "bo2", "case_id": "t1", "usage": {"input_tokens": 100, "output_tokens": 50}},
    {"strategy": "bo2", "case_id": "t1", "usage": {"input_tokens": 100, "output_tokens": 70}},
    {"arm": "bo2", "task_id": "t2", "status": "error", "error": "HTTP 502"},
    {"arm": "bo2", "task_id": "t2", "status": "ok"},
    {"arm": "bo2", "task_id": "t2", "role": "judge", "total_tokens": 5000},
]


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_json_contract(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", str(ledger), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"by", "groups", "judge", "billed_total_tokens", "warnings"}
    assert out["by"] == "arm" and out["judge"]["total_tokens"] == 5000
    assert out["billed_total_tokens"] == 400 + 320 + 5000
    groups = {g["name"]: g for g in out["groups"]}
    assert list(groups) == ["bo2", "single"]  # sorted by name
    assert groups["single"] == {
        "name": "single",
        "calls": 2,
        "ok": 2,
        "errors": 0,
        "usage_missing": 0,
        "usage_estimated": 0,
        "estimated_token_share": 0.0,
        "prompt_tokens": 60,
        "completion_tokens": 40,
        "total_tokens": 400,
        "mean_total_tokens": 200.0,
        "task_mean_total_tokens": 200.0,
        "latency_p50_ms": None,  # no latency_ms in these rows
        "latency_p95_ms": None,
    }
    bo2 = groups["bo2"]
    assert (bo2["calls"], bo2["ok"], bo2["errors"], bo2["usage_missing"]) == (4, 3, 1, 1)
    assert bo2["total_tokens"] == 320 and bo2["mean_total_tokens"] == 160
    assert bo2["task_mean_total_tokens"] == 320  # only t1 has usage
    assert any("no token usage" in w for w in out["warnings"])


def test_by_task_csv_and_table(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", str(ledger), "--by", "task", "--format", "csv"]) == 0
    records = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["name"] for r in records] == ["t1", "t2"]
    assert records[0]["total_tokens"] == "420" and records[1]["total_tokens"] == "300"
    assert main(["tokens", str(ledger)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split()[:3] == ["arm", "calls", "ok"]
    assert lines[2].split()[:3] == ["bo2", "4", "3"]  # sorted by name
    assert lines[3].split()[:3] == ["single", "2", "2"]
    assert lines[4].split()[:3] == ["TOTAL", "6", "5"]
    assert "warning: 1 ok call(s) have no token usage" in captured.err
    assert main(["tokens", str(ledger), "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("| arm | calls |")


def test_torn_tail_warns_and_succeeds(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open(ledger, "ab") as fh:
        fh.write(b'{"arm": "single", "total_tok')
    assert main(["tokens", str(ledger), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("torn last line" in w and ":8:" in w for w in out["warnings"])


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"arm": "a"}\n{broken\n{"arm": "b"}\n', ":2: not valid JSON"),
        (b"", "empty"),
        (b'{"arm": "a", "total_tokens": NaN}\n{"arm": "b"}\n', ":1: total_tokens is nan"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    assert main(["tokens", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("eloledger: error: ")
    assert needle in err and "Traceback" not in err


def test_missing_file_and_bad_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such ledger file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["tokens", str(tmp_path / "x.jsonl"), "--by", "color"])
    assert info.value.code == 2


def test_real_subprocess(ledger: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert {g["name"] for g in json.loads(done.stdout)["groups"]} == {"single", "bo2"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"arm": "a"}\n[1]\n{"arm": "b"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"{bad}:2: expected a JSON object" in done.stderr
    assert "Traceback" not in done.stderr
