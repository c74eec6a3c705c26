"""`eloledger elo`: every format, the shipped example, reproducible seeds, one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.cli import main

ROWS = "task_id,a,b,outcome\n" + "".join(
    f"t{t},{a},{b},{o}\n"
    for t in range(12)
    for a, b, o in (
        ("small", "large", 0.0 if t % 3 else 1.0),
        ("small", "medium", 0.5),
        ("medium", "large", 0.0 if t % 4 else 1.0),
    )
)


@pytest.fixture
def comps(tmp_path: Path) -> Path:
    path = tmp_path / "comps.csv"
    path.write_text(ROWS)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["elo", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_contract(capsys, comps: Path) -> None:
    status, out, err = run(
        capsys, str(comps), "--format", "json", "--bootstrap", "100", "--seed", "3"
    )
    assert status == 0 and err == ""
    data = json.loads(out)
    assert data["anchor"] == "small" and data["warnings"] == []
    names = [p["name"] for p in data["players"]]
    assert sorted(names) == ["large", "medium", "small"]
    for p in data["players"]:
        assert {
            "name",
            "elo",
            "ci_low",
            "ci_high",
            "games",
            "wins",
            "rank",
            "rank_low",
            "rank_high",
        } <= set(p)
        assert p["ci_low"] <= p["elo"] + 1e-9 <= p["ci_high"] + 2e-9
    small = next(p for p in data["players"] if p["name"] == "small")
    assert small["elo"] == 1000.0 and small["games"] == 24
    # Same seed, same output; another seed, other intervals.
    assert (
        run(capsys, str(comps), "--format", "json", "--bootstrap", "100", "--seed", "3")[1] == out
    )
    assert (
        run(capsys, str(comps), "--format", "json", "--bootstrap", "100", "--seed", "4")[1] != out
    )


def test_table_csv_md(capsys, comps: Path) -> None:
    status, out, _ = run(capsys, str(comps), "--bootstrap", "50", "--anchor", "large")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["player", "elo", "95%"]
    assert (
        "anchor: large = 1000 Elo; 95% intervals (relative to the anchor) from 50 bootstrap rounds over tasks (seed 0)"
        in out
    )
    status, out, _ = run(capsys, str(comps), "--format", "csv", "--bootstrap", "0")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["name"] for r in rows][0] == "large" and len(rows) == 3
    small = next(r for r in rows if r["name"] == "small")
    assert small["elo"] == "1000.00" and small["ci_low"] == ""
    status, out, _ = run(capsys, str(comps), "--format", "md", "--bootstrap", "0")
    assert out.startswith("| player | elo |") and "|---|" in out


def test_example_with_ledger_columns(capsys) -> None:
    status, out, err = run(capsys, "--example", "--format", "json", "--bootstrap", "200")
    assert status == 0, err
    data = json.loads(out)
    assert data["anchor"] == "best_of_1"  # the cheapest arm
    rows = {p["name"]: p for p in data["players"]}
    assert set(rows) == {"best_of_1", "best_of_2", "best_of_4", "best_of_8", "long_cot"}
    assert rows["long_cot"]["dominated"] is True
    assert rows["best_of_8"]["dominated"] is False
    for key in (
        "tokens_per_task",
        "delta_elo_per_1k",
        "marginal_elo_per_1k",
        "elo_per_decade",
        "raw_elo_per_1k",
        "pass_at_1",
        "pass_at_k",
        "tokens_per_success",
    ):
        assert rows["best_of_8"][key] is not None, key
    assert rows["best_of_8"]["pass_k"] == 8
    assert rows["best_of_2"]["elo"] < rows["best_of_4"]["elo"] < rows["best_of_8"]["elo"]
    status, out, _ = run(capsys, "--example", "--bootstrap", "0")
    assert "raw/1k = Elo / (tokens/1000), the ratio popular guides print" in out
    assert "marg/1k" in out.splitlines()[0]


def test_warnings_go_to_stderr_and_json(capsys, tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("task_id,winner,loser\n1,a,b\n2,a,b\n3,b,c\n4,c,b\n")
    status, out, err = run(capsys, str(path), "--bootstrap", "20")
    assert status == 0
    assert "eloledger: warning: never lose: a" in err
    status, out, err = run(capsys, str(path), "--format", "json", "--bootstrap", "0")
    assert any("never lose: a" in w for w in json.loads(out)["warnings"]) and err == ""


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["missing.csv"], "missing.csv: no such file"),
        (["{comps}", "--anchor", "nobody"], "no player named 'nobody'"),
        (["{comps}", "--bootstrap", "-1"], "--bootstrap -1: must be >= 0"),
        (["{comps}", "--prior", "nan"], "--prior nan: must be a finite number"),
        (["{comps}", "--example"], "either COMPARISONS or --example"),
        ([], "missing COMPARISONS file"),
        (["{bad}"], "bad.csv:3: outcome 2.0 is outside [0, 1]"),
    ],
)
def test_errors_are_one_line_exit_2(
    capsys, comps: Path, tmp_path: Path, argv: list[str], needle: str
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("task_id,a,b,outcome\nt,x,y,1\nt,x,y,2\n")
    argv = [a.format(comps=comps, bad=bad) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and err.startswith("eloledger: error: ")


def test_real_process_exit_status(comps: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "elo", str(comps) + ".nope"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and "no such file" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "elo", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and "examples:" in done.stdout and "--task-weight" in done.stdout
