"""A spec written in YAML, as the guides write their experiment and gates config, is read with
the same tables and checks as the TOML spec; its mistakes name the YAML file's own line; its
gates decide the run's exit status like a TOML spec's.

(The seed guides' own YAML file was not available to this session: the YAML below carries the
guide's gate names and four-arm design, in the tables the TOML spec has.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_run_gates_exit import SPEC

from eloledger.errors import UserError
from eloledger.runner.spec import load_spec

SRC = str(Path(__file__).resolve().parents[2] / "src")
YAML = """\
experiment:
  name: gated
  profile: sim
  model: sim-small
  concurrency: 8
tasks:
  source: builtin:arith
  limit: 6
sim:
  speed: 50.0
arms:
  - name: base_1
  - name: cot_1
    system: "Think step by step, then end with 'Answer: <number>'."
  - name: base_4
    kind: best_of_n
    n: 4
    select: verifier
  - name: cot_4
    kind: best_of_n
    n: 4
    select: verifier
    system: "Think step by step, then end with 'Answer: <number>'."
gates:
  arms: {old_1: base_1, new_1: cot_1, old_n: base_4, new_n: cot_4}
  bootstrap_rounds: 50
  max_token_growth_ratio: 0.001
  max_latency_growth_ratio: 1000
"""
TOML = SPEC.format(tokens=0.001, latency=1000)  # the same spec, as TOML


def test_yaml_and_toml_give_the_same_spec(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(YAML)
    (tmp_path / "spec.toml").write_text(TOML)
    from_yaml = load_spec(tmp_path / "spec.yaml")
    from_toml = load_spec(tmp_path / "spec.toml")
    assert from_yaml.arms == from_toml.arms
    assert (from_yaml.name, from_yaml.tasks_limit) == (from_toml.name, from_toml.tasks_limit)
    assert from_yaml.ledger.name == "gated.ledger.jsonl"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("    n: 4\n    select: verifier\n  - name: cot_4", "    n: 4\n    selct: verifier\n  - name: cot_4"),
         "spec.yml:18: unknown key 'selct'"),
        (("  bootstrap_rounds: 50", "  bootstrap_rounds: -1"),
         "spec.yml: gates.bootstrap_rounds: must be a whole number >= 1"),
        (("  limit: 6", "  limit: [6"), "spec.yml:9: not valid YAML"),
    ],
)  # fmt: skip
def test_yaml_mistakes_name_the_yaml_line(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    assert change[0] in YAML
    (tmp_path / "spec.yml").write_text(YAML.replace(*change))
    with pytest.raises(UserError) as info:
        load_spec(tmp_path / "spec.yml")
    assert expected in info.value.one_line()
    assert "eloledger-gates-" not in info.value.one_line()  # never the private twin's path


def test_a_yaml_spec_runs_and_its_failed_gate_stops_ci(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(YAML)
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--ledger", str(tmp_path / "l.jsonl")],
        capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    failed = [line for line in done.stderr.splitlines() if "GATE FAILED" in line]
    assert len(failed) == 1 and "max_token_growth_ratio" in failed[0], done.stderr
