"""Leakage found with the power the design has: the matched-budget comparison shows that an
N-way gain was bought with tokens, where "no gain at n=1" alone (an equivalence test within
5 pp) needs more tasks than most designs have; and a design without that power says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.budget.fairness import fairness_verdict
from eloledger.budget.fairness_sim import four_arm_design, guide_leakage_example
from eloledger.cli import main
from eloledger.ledger import LedgerWriter

ARMS = ("old_1", "new_1", "old_n", "new_n")
FLAGS = ["--old-1", "old_1", "--new-1", "new_1", "--old-n", "old_n", "--new-n", "new_n"]


def test_the_guides_leakage_example_reads_leakage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # n=1 delta -3 pp (CI about -9 to +3) at 200 tasks; the N-way arm +28.5 pp at 5.38x the
    # tokens; nothing gained at a matched budget. Before: inconclusive (n=1 could not be
    # shown equal within 5 pp on 200 tasks).
    ledger = tmp_path / "guide.jsonl"
    with LedgerWriter(ledger) as writer:
        for row in guide_leakage_example():
            writer.append(row)
    assert main(["fairness", str(ledger), *FLAGS, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    metrics = record["metrics"]
    assert metrics["pass1_delta"]["estimate"] == pytest.approx(-0.03)
    assert metrics["pass1_delta"]["ci_low"] == pytest.approx(-0.09, abs=0.01)
    assert metrics["pass1_delta"]["ci_high"] == pytest.approx(0.03, abs=0.01)
    assert metrics["passN_delta"]["estimate"] == pytest.approx(0.285)
    assert metrics["token_ratio_n"]["estimate"] == pytest.approx(5.38, abs=0.005)
    assert abs(metrics["matched_passk_delta"]["estimate"]) < 0.01
    assert record["verdict"] == "budget_leakage", record["reason"]
    assert "bought with tokens" in record["reason"]
    assert record["comparisons"]["n_way"]["holds"] and not record["comparisons"]["n1"]["holds"]


def test_clear_leakage_with_one_session_and_noisy_tokens_is_found() -> None:
    # Same method, same mean cost, +-20% tokens per sample, one session per task; the new
    # N-way arm draws 8 samples to the old one's 4. Before: found about half of the time.
    reps, found = 10, 0
    for rep in range(reps):
        rows = four_arm_design(n_old=4, n_new=8, tasks=400, jitter=0.2, seed=900 + rep)
        found += fairness_verdict(rows, *ARMS, bootstrap=200, seed=rep)["verdict"] == (
            "budget_leakage"
        )
    assert found >= 7, found


def test_a_design_without_the_power_says_what_it_detects() -> None:
    rows = four_arm_design(n_old=4, n_new=8, tasks=40, seed=1)
    record = fairness_verdict(rows, *ARMS, bootstrap=300)
    assert record["verdict"] == "inconclusive"
    assert record["design"]["mde_bought"] > 0
    assert "matched-budget comparison shows a bought majority only when" in record["reason"]
    assert "pp (80% power)" in record["reason"]
