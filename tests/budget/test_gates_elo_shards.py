"""`elo` takes several comparisons files, globs and folders; the Elo table of
N shards run in parallel equals the unsharded run's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.cli import main

SPEC = """[experiment]
name = "sharded"
profile = "sim"
ledger = "sharded.ledger.jsonl"
sessions = 2
seed = 7

[tasks]
source = "builtin:arith"
limit = 6

[[arms]]
name = "one"

[[arms]]
name = "best3"
kind = "best_of_n"
n = 3

[[arms]]
name = "best2"
kind = "best_of_n"
n = 2
"""


def _cmd(*extra: str) -> list[str]:
    return [sys.executable, "-m", "eloledger", "run", "spec.toml", "--headless", "--quiet", *extra]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole run, and its 3 shards run in parallel (one process each)."""
    root = tmp_path_factory.mktemp("shards")
    (root / "spec.toml").write_text(SPEC)
    procs = [
        subprocess.Popen(_cmd(*shard), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for shard in ((), ("--shard", "1/3"), ("--shard", "2/3"), ("--shard", "3/3"))
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    return root


def _elo(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["elo", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _table(report: dict) -> dict:
    return {p["name"]: p for p in report["players"]}


def test_shards_read_as_the_whole_run(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = _table(_elo(capsys, str(runs / "sharded.comparisons.csv"), "--ledger", str(runs / "sharded.ledger.jsonl")))  # fmt: skip
    shards = sorted(runs.glob("sharded.shard-*-of-3.comparisons.csv"))
    assert len(shards) == 3
    ledgers = str(runs / "sharded.shard-*-of-3.ledger.jsonl")
    parts = _table(_elo(capsys, *map(str, shards), "--ledger", ledgers))
    assert set(parts) == set(whole) == {"one", "best2", "best3"}
    for name, row in whole.items():
        for key in ("elo", "ci_low", "ci_high", "games", "wins", "rank", "tokens_per_task",
                    "pass_at_1", "tokens_per_success"):  # fmt: skip
            assert parts[name][key] == pytest.approx(row[key], rel=1e-9, abs=1e-9), (name, key)
    glob = _table(_elo(capsys, str(runs / "sharded.shard-*-of-3.comparisons.csv")))
    assert {n: r["elo"] for n, r in glob.items()} == pytest.approx({n: r["elo"] for n, r in whole.items()})  # fmt: skip


def test_a_folder_of_shards(runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for p in runs.glob("sharded.shard-*"):
        shutil.copy(p, tmp_path / p.name)  # comparisons, results and ledgers side by side
    folder = _table(_elo(capsys, str(tmp_path)))
    whole = _table(_elo(capsys, str(runs / "sharded.comparisons.csv")))
    assert {n: r["elo"] for n, r in folder.items()} == pytest.approx({n: r["elo"] for n, r in whole.items()})  # fmt: skip
    assert sum(r["games"] for r in folder.values()) == sum(r["games"] for r in whole.values())


def test_missing_shard_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["elo", str(tmp_path / "nope-*.csv")]) == 2
    assert "no file matches" in capsys.readouterr().err
    assert main(["elo", str(tmp_path)]) == 2
    assert "holds no comparisons file" in capsys.readouterr().err
