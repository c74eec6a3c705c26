"""`eloledger fairness` on a real ledger file: the archivable JSON record, table, errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from eloledger import __version__
from eloledger.budget.sampling_sim import four_arms
from eloledger.cli import main
from eloledger.ledger import LedgerWriter

ARGS = ["--old-1", "old_1", "--new-1", "new_1", "--old-n", "old_n", "--new-n", "new_n"]


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    path = tmp_path / "leaky.jsonl"
    with LedgerWriter(path) as writer:
        for row in four_arms(n_old=4, n_new=16, tasks=400, seed=4):
            writer.append(row)
    return path


def test_json_record_names_its_inputs(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fairness", str(leaky), *ARGS, "--bootstrap", "300", "--seed", "9"])
    assert code == 0
    record = json.loads(capsys.readouterr().out)
    assert record["verdict"] == "budget_leakage"
    assert record["ledger"]["sha256"] == hashlib.sha256(leaky.read_bytes()).hexdigest()
    assert record["ledger"]["rows"] == 400 * 4 * (1 + 1 + 4 + 16)
    assert record["inputs"]["seed"] == 9 and record["inputs"]["bootstrap"] == 300
    assert record["eloledger_version"] == __version__ and record["created_utc"].endswith("+00:00")
    for name in (
        "pass1_delta",
        "tokens_per_success_delta",
        "passN_delta",
        "token_ratio_n",
        "interaction",
    ):
        assert set(record["metrics"][name]) == {
            "estimate", "ci_low", "ci_high", "ci90_low", "ci90_high", "se"
        }  # fmt: skip


def test_table(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fairness", str(leaky), *ARGS, "--bootstrap", "100", "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("verdict: budget_leakage\nreason:  pass@N improves")
    assert "passN_delta" in out and "tok/success" in out and "rule:" in out


def test_unknown_arm_is_one_line_listing_the_arms(
    leaky: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--old-1", "old_1", "--new-1", "cot_1", "--old-n", "old_n", "--new-n", "new_n"]
    assert main(["fairness", str(leaky), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unknown arm(s) new_1='cot_1'" in err and "new_1, new_n, old_1, old_n" in err


def test_bad_options_exit_2(leaky: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fairness", str(leaky), *ARGS, "--bootstrap", "0"]) == 2
    assert "--bootstrap 0" in capsys.readouterr().err
    assert main(["fairness", str(leaky), *ARGS, "--leak-ratio", "nan"]) == 2
    assert "--leak-ratio" in capsys.readouterr().err
    # missing flags (optional since a gate file's [gates] arms may name them)
    assert main(["fairness", str(leaky), "--old-1", "old_1"]) == 2
    assert "--new-1, --old-n, --new-n not given" in capsys.readouterr().err
