"""A real GSM8K file (each row only ``question`` and ``answer``, no id) runs as it is.

Its tasks are named from the file's name and line (``gsm8k-test:17``): stable across runs and
``--resume``, and said once on stderr. Before, the file was refused with a fix ("name the id
column") that cannot be applied to a file that has none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.tasks import load_tasks

SRC = str(Path(__file__).resolve().parents[2] / "src")
# Three rows as GSM8K's test.jsonl has them (question, answer ending "#### <number>").
GSM8K = [
    {"question": "Janet has 3 apples and buys 4 more. How many apples does she have?",
     "answer": "She has 3 + 4 = <<3+4=7>>7 apples.\n#### 7"},
    {"question": "A book costs $12. How much do 3 books cost?",
     "answer": "3 * 12 = <<3*12=36>>36\n#### 36"},
    {"question": "Tom ran 5 km on Monday and 8 km on Tuesday. How far did he run?",
     "answer": "5 + 8 = <<5+8=13>>13\n#### 13"},
]  # fmt: skip


def _gsm8k(folder: Path) -> Path:
    path = folder / "gsm8k-test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in GSM8K))
    return path


def test_ids_come_from_file_name_and_line(tmp_path: Path) -> None:
    tasks = load_tasks(str(_gsm8k(tmp_path)))
    assert [t.task_id for t in tasks] == ["gsm8k-test:1", "gsm8k-test:2", "gsm8k-test:3"]
    assert [t.answer for t in tasks] == ["7", "36", "13"]
    assert tasks[0].prompt == GSM8K[0]["question"]


def test_a_named_id_column_that_is_missing_is_still_an_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"gsm8k-test.jsonl:1: missing or empty 'task_id'"):
        load_tasks(str(_gsm8k(tmp_path)), fields={"id": "qid"})


def test_a_spec_on_a_gsm8k_file_runs_and_says_how_tasks_are_named(tmp_path: Path) -> None:
    _gsm8k(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[experiment]\nname = "gsm8k"\nprofile = "sim"\nmodel = "sim-small"\n\n'
        '[tasks]\nsource = "gsm8k-test.jsonl"\n\n[sim]\nspeed = 50.0\n\n'
        '[[arms]]\nname = "baseline"\n\n[[arms]]\nname = "cot"\nsystem = "Think step by step."\n'
    )
    ledger = tmp_path / "l.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--ledger", str(ledger)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "without an id column" in line]
    assert len(said) == 1, done.stderr
    assert "gsm8k-test.jsonl line numbers (gsm8k-test:1, ...)" in said[0]
    ids = {json.loads(line)["task_id"] for line in ledger.read_text().splitlines()}
    assert ids == {"gsm8k-test:1", "gsm8k-test:2", "gsm8k-test:3"}
