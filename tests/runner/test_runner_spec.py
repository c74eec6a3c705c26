"""Spec errors fail before any request and name the spec file, the TOML line and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.runner.resolve import resolve_endpoint, resolve_tasks
from eloledger.runner.spec import load_spec

GOOD = """\
[experiment]
name = "t"
profile = "sim"
concurrency = 4

[budget]
per_task_tokens = 1000

[tasks]
source = "builtin:arith"
limit = 3

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "four"
kind = "best_of_n"
n = 4
same_budget = true

[[arms]]
name = "sc"
kind = "self_consistency"
k = 5
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def _error(tmp_path: Path, text: str, *, resolve: bool = False) -> str:
    path = _write(tmp_path, text)
    with pytest.raises(UserError) as info:
        spec = load_spec(path)
        if resolve:
            resolve_tasks(spec)
            resolve_endpoint(spec)
    return info.value.one_line()


def test_good_spec_parses_with_same_budget(tmp_path: Path) -> None:
    spec = load_spec(_write(tmp_path, GOOD))
    assert [a.name for a in spec.arms] == ["one", "four", "sc"]
    four = spec.arms[1]
    assert (four.n, four.select, four.max_tokens) == (4, "verifier", 250)  # 1000 // 4
    assert spec.arms[2].select == "majority" and spec.arms[2].n == 5
    assert spec.ledger == tmp_path / "t.ledger.jsonl"
    assert spec.comparisons_path() == tmp_path / "t.comparisons.csv"
    assert len(resolve_tasks(spec)) == 3
    assert resolve_endpoint(spec).is_sim


def test_unknown_arm_kind_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace('kind = "best_of_n"', 'kind = "best_of_m"'))
    assert f"{tmp_path / 'spec.toml'}:19:" in message
    assert "best_of_m" in message and "fix:" in message and "best_of_n" in message


def test_n_below_one_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace("n = 4", "n = 0"))
    assert "spec.toml:20:" in message and "n = 0" in message


def test_unknown_key_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace("limit = 3", "limit = 3\nlimmit = 4"))
    assert "spec.toml:12:" in message and "limmit" in message and "allowed keys" in message


def test_missing_task_file_names_the_source_line(tmp_path: Path) -> None:
    text = GOOD.replace('"builtin:arith"', '"nope.jsonl"')
    message = _error(tmp_path, text, resolve=True)
    assert "spec.toml:10:" in message and "nope.jsonl" in message and "not found" in message


def test_unknown_profile_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace('profile = "sim"', 'profile = "nosuch"'), resolve=True)
    assert "spec.toml:3:" in message and "nosuch" in message and "fix:" in message


def test_bad_toml_names_its_line(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace("concurrency = 4", "concurrency = = 4"))
    assert "spec.toml:4:" in message and "TOML" in message


def test_same_budget_without_per_task_tokens(tmp_path: Path) -> None:
    text = GOOD.replace("[budget]\nper_task_tokens = 1000\n", "")
    message = _error(tmp_path, text)
    assert "same_budget" in message and "per_task_tokens" in message and ":19:" in message


def test_select_must_fit_kind_and_single_has_one_sample(tmp_path: Path) -> None:
    message = _error(tmp_path, GOOD.replace("k = 5", 'k = 5\nselect = "verifier"'))
    assert "select" in message and "majority" in message
    message = _error(tmp_path, GOOD.replace('kind = "single"', 'kind = "single"\nn = 3'))
    assert "single" in message and "spec.toml:16:" in message


def test_missing_spec_and_duplicate_arm(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_spec(tmp_path / "absent.toml")
    message = _error(tmp_path, GOOD.replace('name = "four"', 'name = "one"'))
    assert "duplicate" in message and "spec.toml:18:" in message


def test_cli_reports_spec_error_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from eloledger.cli import main

    path = _write(tmp_path, GOOD.replace("n = 4", "n = -2"))
    assert main(["run", str(path), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "spec.toml:20:" in err and "Traceback" not in err
