"""Baselines as the guides set them: the n = 1 member of a budget ladder answers greedily
(temperature 0) unless told otherwise, and the run's Elo table is anchored at the baseline arm
(settable with ``[experiment] anchor`` or ``--anchor``), not at whichever arm is cheapest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.runner.spec import parse_spec
from sim_spec import small_demo_spec

SRC = str(Path(__file__).resolve().parents[2] / "src")
LADDER = """
[experiment]
name = "ladder"
profile = "sim"
{anchor}
[tasks]
source = "builtin:arith"

[[arms]]
name = "bon"
kind = "best_of_n"
n = [1, 2, 4]
select = "verifier"
temperature = 0.8

[[arms]]
name = "sc1"
kind = "self_consistency"
k = 1
"""


def test_the_ladders_n1_member_is_greedy_the_others_sample() -> None:
    spec = parse_spec(LADDER.format(anchor=""))
    temps = {a.name: a.temperature for a in spec.arms}
    assert temps == {"bon_n1": 0.0, "bon_n2": 0.8, "bon_n4": 0.8, "sc1": 0.0}
    told = parse_spec(LADDER.format(anchor="").replace('k = 1', 'k = 1\ntemperature = 0.5'))
    assert told.arms[-1].temperature == 0.5  # an n = 1 arm's own temperature is kept


def test_the_anchor_from_the_spec_and_a_wrong_one() -> None:
    assert parse_spec(LADDER.format(anchor="")).elo_anchor() == "bon_n1"  # the first arm
    assert parse_spec(LADDER.format(anchor='anchor = "sc1"')).elo_anchor() == "sc1"
    with pytest.raises(UserError, match=r"anchor = 'bon' is not an arm"):
        parse_spec(LADDER.format(anchor='anchor = "bon"'))


def _run(spec: Path, ledger: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--format", "json", "--ledger", str(ledger), *extra],
        capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip


def test_the_demos_table_is_anchored_at_its_baseline_or_where_asked(tmp_path: Path) -> None:
    spec = small_demo_spec(tmp_path, 2)
    done = _run(spec, tmp_path / "a.jsonl")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["anchor"] == "best_of_1"  # the demo's n = 1 baseline
    wrong = _run(spec, tmp_path / "b.jsonl", "--anchor", "nope")
    assert wrong.returncode == 2 and "--anchor 'nope': not an arm" in wrong.stderr
    assert not (tmp_path / "b.jsonl").exists()  # refused before a call


def test_anchor_on_the_command_line(tmp_path: Path) -> None:
    spec = small_demo_spec(tmp_path, 1)
    done = _run(spec, tmp_path / "c.jsonl", "--anchor", "debate_2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["anchor"] == "debate_2"
