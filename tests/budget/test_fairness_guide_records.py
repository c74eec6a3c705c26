"""The guide's example decision and memory record, in the guide's words: ``verdict ==
"real_evolution"``, a numeric ``same_budget.budget``, ``min_same_budget_gain`` read as the
guide reads it (delta 0.11, ci95 [0.04, 0.18] passes at 0.08), and the memory entry's
``memory_id``, ``decision`` (promote_to_skill / do_not_promote), ``pattern`` and deltas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.budget.fairness_sim import guide_decision_example
from eloledger.cli import main
from eloledger.ledger import LedgerWriter

FLAGS = [
    "--old-1", "baseline_1", "--new-1", "candidate_1",
    "--old-n", "baseline_4", "--new-n", "candidate_4",
]  # fmt: skip
GUIDE_GATES = "[gates]\nmin_same_budget_gain = 0.08\nmax_token_growth_ratio = 1.10\n"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "decision.jsonl"
    with LedgerWriter(path) as writer:
        for row in guide_decision_example():
            writer.append(row)
    return path


def _gates(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gates.toml"
    path.write_text(text)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["fairness", *argv, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_the_guides_example_decision_is_a_real_evolution_and_passes_its_gate(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rec = _run(capsys, str(ledger), *FLAGS, "--gates", str(_gates(tmp_path, GUIDE_GATES)))
    assert rec["verdict"] == "real_evolution"
    same = rec["same_budget"]
    assert same["delta"] == pytest.approx(0.11)
    assert same["ci95"] == pytest.approx([0.04, 0.18], abs=0.006)
    assert same["budget"] == pytest.approx(410.0)  # tokens per task at n=1: a number
    assert rec["same_budget_delta"] == rec["bestofn_off_delta"] == pytest.approx(0.11)
    gate = next(g for g in rec["gates"] if g["gate"] == "min_same_budget_gain")
    assert gate["pass"] is True and gate["value"] == pytest.approx(0.11) and gate["rule"] == "guide"
    assert code == 0  # before: the interval's lower end 0.04 < 0.08 failed the gate (exit 1)


def test_the_strict_reading_is_a_named_option(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gates = _gates(tmp_path, GUIDE_GATES)
    code, rec = _run(capsys, str(ledger), *FLAGS, "--gates", str(gates), "--gain-rule", "lower_bound")
    gate = next(g for g in rec["gates"] if g["gate"] == "min_same_budget_gain")
    assert code == 1 and gate["pass"] is False and gate["value"] == pytest.approx(0.04, abs=0.006)
    strict = _gates(tmp_path, GUIDE_GATES + 'min_same_budget_gain_rule = "lower_bound"\n')
    assert _run(capsys, str(ledger), *FLAGS, "--gates", str(strict))[0] == 1


def test_a_gain_whose_interval_touches_zero_fails_the_guides_reading(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a point gain over the threshold is not enough: the interval must exclude 0
    # 40 of the example's tasks: 10 both solve, 6 only the baseline, 10 only the candidate
    keep = [*range(0, 10), *range(70, 76), *range(86, 96), *range(124, 138)]
    wanted = {f"task{t:03d}" for t in keep}
    rows = [r for r in guide_decision_example() if r["task_id"] in wanted]
    small = tmp_path / "small.jsonl"
    with LedgerWriter(small) as writer:
        for row in rows:
            writer.append(row)
    code, rec = _run(capsys, str(small), *FLAGS, "--gates", str(_gates(tmp_path, GUIDE_GATES)))
    gate = next(g for g in rec["gates"] if g["gate"] == "min_same_budget_gain")
    assert rec["same_budget"]["delta"] >= 0.08 and rec["same_budget"]["ci95"][0] <= 0
    assert gate["pass"] is False and code == 1


def test_a_bad_gain_rule_is_one_line_exit_2(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _gates(tmp_path, GUIDE_GATES + 'min_same_budget_gain_rule = "upper"\n')
    assert main(["fairness", str(ledger), *FLAGS, "--gates", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "gates.min_same_budget_gain_rule" in err and "lower_bound" in err and err.count("\n") == 1
    assert main(["fairness", str(ledger), *FLAGS, "--gain-rule", "lower_bound"]) == 2
    assert "needs a min_same_budget_gain gate" in capsys.readouterr().err


def test_the_memory_record_in_the_guides_words(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gates = str(_gates(tmp_path, GUIDE_GATES))
    code, entry = _run(capsys, str(ledger), *FLAGS, "--gates", gates, "--record", "memory")
    assert code == 0
    assert entry["type"] == "skill_candidate" and entry["decision"] == "promote_to_skill"
    assert entry["verdict"] == "real_evolution" and entry["promote_to_skill"] is True
    assert entry["same_budget_delta"] == pytest.approx(0.11) == entry["bestofn_off_delta"]
    assert entry["tokens_per_success_delta"] < 0 and entry["bestofn_ratio"] == pytest.approx(1.025)
    assert entry["budget"] == pytest.approx(410.0) and entry["pattern"].startswith("candidate_1 over")
    again = _run(capsys, str(ledger), *FLAGS, "--gates", gates, "--record", "memory")[1]
    assert again["memory_id"] == entry["memory_id"] and entry["memory_id"].startswith("mem-")
    # the stricter reading fails the gate: not promoted, and the record says why first
    strict = ["--gain-rule", "lower_bound", "--record", "memory"]
    code, held = _run(capsys, str(ledger), *FLAGS, "--gates", gates, *strict)
    assert code == 1 and held["decision"] == "do_not_promote" and held["verdict"] == "gate_failed"
    assert held["reason"].startswith("not promoted: gate min_same_budget_gain fails")
    assert "improves" not in held["pattern"] and "min_same_budget_gain" in held["pattern"]


def test_the_memory_record_reads_at_80_columns(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    gates = str(_gates(tmp_path, GUIDE_GATES))
    argv = ["fairness", str(ledger), *FLAGS, "--gates", gates, "--record", "memory"]
    assert main([*argv, "--format", "table"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert lines[0].startswith("memory_id") and "mem-" in lines[0]
    fields = {line.split()[0]: line.split()[1] for line in lines if not line.startswith(" ")}
    assert fields["decision"] == "promote_to_skill" and fields["verdict"] == "real_evolution"
    assert fields["promote_to_skill"] == "true" and fields["same_budget_delta"] == "0.11"
    assert fields["budget"] == "410.0" and fields["failed_gates"] == "(none)"
