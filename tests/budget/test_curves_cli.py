"""`eloledger curve` on a real ledger file: json, table, csv, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.budget.sampling_sim import sampling_sessions
from eloledger.cli import main
from eloledger.ledger import LedgerWriter


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.jsonl"
    rows = sampling_sessions(
        arms=("iid", "stall"), tasks=12, sessions=4, samples=12, stall_after={"stall": 2}, seed=1
    )
    with LedgerWriter(path) as writer:
        for row in rows:
            writer.append(row)
        writer.append({"task_id": "task000", "arm": "judge", "role": "judge", "total_tokens": 5})
    return path


def test_json_has_the_issue_shape(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["curve", str(ledger), "--bootstrap", "30", "--seed", "3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in data["arms"]] == ["iid", "stall"]  # judge rows are not an arm
    for arm in data["arms"]:
        assert set(arm) >= {"name", "points", "slope_per_decade", "b_inf"}
        assert set(arm["points"][0]) == {"tokens", "elo", "ci_low", "ci_high"}
        assert len(arm["slope_per_decade"]) == len(arm["points"]) - 1
        tokens = [p["tokens"] for p in arm["points"]]
        assert tokens == sorted(tokens)
    stall = data["arms"][1]
    assert stall["b_inf"] is not None
    assert data["reference"]["elo_per_decade"] == 400.0
    assert {line["name"] for line in data["reference"]["arms"]} == {"iid", "stall"}
    assert data["splitting"] and {"arm", "m", "single_elo", "split_elo"} <= set(
        data["splitting"][0]
    )
    assert data["seed"] == 3 and data["bootstrap"] == 30 and data["grid"] == 1.5
    assert isinstance(data["warnings"], list)


def test_table_and_csv(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["curve", str(ledger), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert "slope/decade" in out and "b_inf (stays below its own best-of-k reference from)" in out
    assert "budget splitting" in out
    assert main(["curve", str(ledger), "--bootstrap", "0", "--grid", "2", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "arm,tokens,elo,ci_low,ci_high,reference_elo,slope_per_decade"
    assert all(line.split(",")[0] in ("iid", "stall") for line in lines[1:])


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--grid", "1"], "grid ratio must be a number above 1"),
        (["--bootstrap", "-1"], "must be 0 or more"),
    ],
)
def test_bad_options_exit_2_with_one_line(
    ledger: Path, extra: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["curve", str(ledger), *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_ledgers_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["curve", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such ledger file" in capsys.readouterr().err
    unscored = tmp_path / "unscored.jsonl"
    unscored.write_text('{"task_id": "t", "arm": "a", "total_tokens": 10}\n')
    assert main(["curve", str(unscored)]) == 2
    assert "no call has a score" in capsys.readouterr().err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"task_id": "t", "arm": "a", "total_tokens": 10, "score": 1}\n{oops\n{}\n')
    assert main(["curve", str(broken)]) == 2
    assert f"{broken}:2" in capsys.readouterr().err


def test_real_subprocess(ledger: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "eloledger",
            "curve",
            str(ledger),
            "--bootstrap",
            "10",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["arms"][0]["name"] == "iid"
    helped = subprocess.run(
        [sys.executable, "-m", "eloledger", "curve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "examples:" in helped.stdout and "b_inf" in helped.stdout


def test_sessions_of_a_thousand_samples_give_curves_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs appended to one ledger without a session field pile their samples into one
    session per task and arm. Before: the best-of-k reference's subset counts passed 1e308,
    the fit got NaN and ``curve`` ended in a traceback (and below that, every best-of-k from 1
    to 1,000 was a player: minutes)."""
    path = tmp_path / "many.jsonl"
    rows = sampling_sessions(arms=("iid",), tasks=5, sessions=1, samples=1000, seed=2)
    with LedgerWriter(path) as writer:
        for row in rows:
            writer.append(row)
    assert main(["curve", str(path), "--format", "json", "--bootstrap", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    reference = out["reference"]["arms"][0]["points"]
    assert reference and all(p["elo"] is not None for p in reference)
