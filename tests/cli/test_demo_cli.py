"""`eloledger demo`: the whole pipeline on the simulator, and JSON shaped like `eloledger elo`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.runner.spec import parse_spec


def test_print_spec_is_a_valid_spec(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["demo", "--print-spec"]) == 0
    text = capsys.readouterr().out
    path = tmp_path / "copy.toml"
    path.write_text(text)
    spec = parse_spec(text, path=path)
    assert spec.profile == "sim"
    assert [a.name for a in spec.arms] == [
        "best_of_1",
        "best_of_2",
        "best_of_4",
        "best_of_8",
        "self_consistency_5",
        "cot",
        "debate_2",
    ]
    assert spec.ledger == tmp_path / "demo.ledger.jsonl"


def test_demo_headless_json_matches_elo_shape(capsys: pytest.CaptureFixture, demo_run) -> None:
    ledger = demo_run.ledger
    demo = demo_run.report
    assert "simulator" in demo_run.stderr and "calls" in demo_run.stderr  # what it is; live lines

    assert (
        main(
            [
                "elo",
                str(demo_run.comparisons),
                "--ledger",
                str(ledger),
                "--format",
                "json",
                "--anchor",
                "best_of_1",  # the run anchors at the spec's baseline, its first arm
            ]
        )
        == 0
    )
    elo = json.loads(capsys.readouterr().out)
    assert set(elo) <= set(demo)
    assert [p["name"] for p in demo["players"]] == [p["name"] for p in elo["players"]]
    for mine, theirs in zip(demo["players"], elo["players"], strict=True):
        assert set(mine) == set(theirs)
        assert {"name", "elo", "ci_low", "ci_high", "games", "wins"} <= set(mine)
        assert mine["elo"] == pytest.approx(theirs["elo"])
    assert demo["anchor"] == elo["anchor"]
    names = {p["name"] for p in demo["players"]}
    assert names == {
        "best_of_1", "best_of_2", "best_of_4", "best_of_8", "self_consistency_5", "cot", "debate_2"
    }  # fmt: skip
    tokens = {p["name"]: p["tokens_per_task"] for p in demo["players"]}
    assert tokens["best_of_1"] < tokens["best_of_2"] < tokens["best_of_4"] < tokens["best_of_8"]
    assert demo["run"]["stopped"] == "completed" and demo["run"]["calls_made"] == 46 * (20 + 1 + 2 * 2)
    assert {a["arm"] for a in demo["arms"]} == names
