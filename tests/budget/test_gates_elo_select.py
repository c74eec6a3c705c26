"""`elo --ledger`: p50/p95 latency per arm and --split/--tag (item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.ledger import LedgerWriter


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, Path]:
    ledger, comps = tmp_path / "l.jsonl", tmp_path / "c.csv"
    lines = ["task_id,winner,loser"]
    with LedgerWriter(ledger) as writer:
        for t in range(20):
            split = "test" if t < 8 else "val"
            for arm, ms in (("a", 100.0), ("b", 400.0)):
                writer.append({
                    "task_id": f"t{t}", "arm": arm, "session": "0", "role": "sample",
                    "prompt_tokens": 10, "completion_tokens": 10, "latency_ms": ms + t,
                    "passed": arm == "a" or split == "val", "split": split,
                    "tags": ["x"] if t % 2 else ["y"],
                })  # fmt: skip
            # a wins on test tasks, b on val tasks
            lines.append(f"t{t},a,b" if split == "test" else f"t{t},b,a")
    comps.write_text("\n".join(lines) + "\n")
    return comps, ledger


def _players(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["elo", *argv, "--format", "json"]) == 0
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["players"]}


def test_latency_columns(run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    comps, ledger = run
    players = _players(capsys, str(comps), "--ledger", str(ledger))
    assert players["a"]["latency_p50_ms"] == pytest.approx(109.5)
    assert players["b"]["latency_p95_ms"] == pytest.approx(418.05)
    assert main(["elo", str(comps), "--ledger", str(ledger), "--wide"]) == 0
    assert "p95 ms" in capsys.readouterr().out.splitlines()[0]


def test_split_and_tag(run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    comps, ledger = run
    test = _players(capsys, str(comps), "--ledger", str(ledger), "--split", "test")
    assert test["a"]["games"] == 8 and test["a"]["wins"] == 8
    assert test["b"]["pass_at_1"] == 0.0 and test["b"]["latency_p95_ms"] == pytest.approx(406.65)
    val = _players(capsys, str(comps), "--ledger", str(ledger), "--split", "val", "--tag", "x")
    assert val["b"]["games"] == 6 and val["b"]["wins"] == 6  # t9, t11, ..., t19
    assert main(["elo", str(comps), "--split", "test"]) == 2
    assert "--ledger" in capsys.readouterr().err
