"""`elo --threshold X` marks each arm worth it or not and names the knee, as
the TUI's Elo tab does."""

from __future__ import annotations

import json

import pytest

from eloledger.cli import main


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["elo", "--example", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_threshold_marks_worth_it_and_the_knee(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "--threshold", "50")
    assert data["worth_it"] == {"threshold": 50.0, "knee": "best_of_4"}
    worth = {p["name"]: p["worth_it"] for p in data["players"]}
    # marg/1k of the example: best_of_2 143.8, best_of_4 73.4, best_of_8 39.0; long_cot dominated
    assert worth == {"best_of_1": True, "best_of_2": True, "best_of_4": True,
                     "best_of_8": False, "long_cot": False}  # fmt: skip
    low = _json(capsys, "--threshold", "5")
    assert low["worth_it"]["knee"] == "best_of_8"
    assert "worth_it" not in _json(capsys)  # only when asked


def test_same_knee_as_the_tui(capsys: pytest.CaptureFixture[str]) -> None:
    from eloledger.tui.elo_tab import knee

    for threshold in (0, 40, 100, 150):
        data = _json(capsys, "--threshold", str(threshold))
        assert data["worth_it"]["knee"] == knee(data["players"], threshold)


def test_table_column_and_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["elo", "--example", "--threshold", "50", "--wide"]) == 0
    out = capsys.readouterr().out
    assert "worth it" in out.splitlines()[0] and "knee: best_of_4" in out
    assert main(["elo", "--example", "--wide"]) == 0
    assert "worth it" not in capsys.readouterr().out


def test_threshold_needs_costs(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    comps = tmp_path / "c.csv"
    comps.write_text("task_id,winner,loser\nt1,a,b\nt2,b,a\nt3,a,b\n")
    assert main(["elo", str(comps), "--threshold", "5"]) == 2
    assert "--ledger" in capsys.readouterr().err
