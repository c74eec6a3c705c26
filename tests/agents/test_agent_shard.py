"""``run --shard I/N``: deterministic, disjoint, complete slices, each in its own ledger."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.runner.shard import Shard, parse_shard, shard_ledger

SPEC = """[experiment]
name = "sharded"
profile = "sim"
ledger = "sharded.ledger.jsonl"
sessions = 2
seed = 7

[tasks]
source = "builtin:arith"
limit = 5

[[arms]]
name = "one"

[[arms]]
name = "best3"
kind = "best_of_n"
n = 3
"""


def _run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "spec.toml").write_text(SPEC)
    cmd = [sys.executable, "-m", "eloledger", "run", "spec.toml", "--headless", "--quiet"]
    return subprocess.run([*cmd, *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def _keys(path: Path) -> Counter:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return Counter(
        (r["task_id"], r["arm"], r["session"], r["sample"])
        for r in rows
        if r.get("role") == "sample"
    )


def test_shards_partition_the_run_and_match_the_whole(tmp_path: Path) -> None:
    whole = _run(tmp_path)
    assert whole.returncode == 0, whole.stderr
    all_keys = _keys(tmp_path / "sharded.ledger.jsonl")
    seen: Counter = Counter()
    comparisons = 0
    for i in (1, 2, 3):
        out = _run(tmp_path, "--shard", f"{i}/3")
        assert out.returncode == 0, out.stderr
        ledger = tmp_path / f"sharded.shard-{i}-of-3.ledger.jsonl"
        keys = _keys(ledger)
        assert keys and max(keys.values()) == 1
        for task in {t for t, _, _, _ in keys}:  # every arm and session of a task together
            assert len([k for k in keys if k[0] == task]) == 2 * (1 + 3)
        seen.update(keys)
        csv = tmp_path / f"sharded.shard-{i}-of-3.comparisons.csv"
        comparisons += len(csv.read_text().splitlines()) - 1
    assert seen == all_keys  # disjoint and complete
    whole_csv = (tmp_path / "sharded.comparisons.csv").read_text().splitlines()
    assert comparisons == len(whole_csv) - 1
    again = _run(tmp_path, "--shard", "2/3", "--ledger", "again.jsonl")
    assert again.returncode == 0
    assert _keys(tmp_path / "again.jsonl") == _keys(
        tmp_path / "sharded.shard-2-of-3.ledger.jsonl"
    )  # deterministic


@pytest.mark.parametrize("text", ["0/3", "4/3", "1-3", "", "a/b"])
def test_bad_shard_is_a_one_line_error(text: str, tmp_path: Path) -> None:
    with pytest.raises(UserError):
        parse_shard(text)
    out = _run(tmp_path, "--shard", text)
    assert out.returncode == 2 and "--shard" in out.stderr and "Traceback" not in out.stderr


def test_shard_ledger_names() -> None:
    assert shard_ledger(Path("x/a.ledger.jsonl"), Shard(2, 4)).name == "a.shard-2-of-4.ledger.jsonl"
    assert shard_ledger(Path("b.jsonl"), Shard(1, 2)).name == "b.shard-1-of-2.jsonl"
