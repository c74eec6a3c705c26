"""Tokens per success = tokens per solved task, in every face .

Known truth: 200 tasks, a single-sample arm and a best-of-8 arm (verifier selection) at 1,000
tokens a sample. The best-of-8 arm spends 8,000 tokens a task; its tokens per success must be
8,000 x 200 / (tasks it solved), counted by hand here -- not tokens per passing sample, which
made the 8x arm look cheaper than the single one. The CLI table, the CLI JSON, the TUI's Elo tab
and ``eloledger fairness`` must all print that same number under the same label.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import DataTable

from eloledger.budget.outcomes import arm_outcomes
from eloledger.cli import main
from eloledger.ledger import LedgerWriter

TASKS = 200
TOKENS = 1000
ARMS = {"single": 1, "single_b": 1, "bo8": 8, "bo8_b": 8}


def simulate(seed: int = 0) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Ledger rows and, per arm, whether each task was solved (any of its samples passes:
    what a verifier submits on pass/fail tasks)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1.0, 1.5, TASKS)  # per-task pass rate of one sample
    rows: list[dict] = []
    solved: dict[str, np.ndarray] = {}
    for arm, n in ARMS.items():
        passed = rng.random((TASKS, n)) < p[:, None]
        solved[arm] = passed.any(1)
        for t in range(TASKS):
            for k in range(n):
                ok = bool(passed[t, k])
                rows.append({
                    "task_id": f"t{t:03d}", "arm": arm, "session": 0, "sample": k,
                    "role": "sample", "status": "ok", "usage_source": "server",
                    "prompt_tokens": 400, "completion_tokens": TOKENS - 400,
                    "total_tokens": TOKENS, "passed": ok, "score": float(ok),
                })  # fmt: skip
    return rows, solved


def write_inputs(tmp: Path, rows: list[dict], solved: dict[str, np.ndarray]) -> tuple[Path, Path]:
    ledger = tmp / "run.jsonl"
    with LedgerWriter(ledger) as writer:
        for row in rows:
            writer.append(row)
    comps = tmp / "run.comparisons.csv"
    names = list(ARMS)
    with open(comps, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task_id", "a", "b", "outcome"])
        for t in range(TASKS):
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    sa, sb = solved[a][t], solved[b][t]
                    w.writerow([f"t{t:03d}", a, b, 0.5 if sa == sb else float(sa)])
    return ledger, comps


def hand_count(solved: dict[str, np.ndarray]) -> dict[str, float]:
    return {arm: ARMS[arm] * TOKENS * TASKS / solved[arm].sum() for arm in ARMS}


def test_best_of_8_pays_its_eight_samples_per_solved_task() -> None:
    rows, solved = simulate()
    outcomes, warnings = arm_outcomes(rows)
    truth = hand_count(solved)
    for arm in ARMS:
        assert outcomes[arm].tokens_per_success == pytest.approx(truth[arm])
        assert outcomes[arm].solved == solved[arm].sum()
    # The 8x arm costs more per solved task than the single arm (the per-sample count said
    # the opposite: 8,000 x 200 / passing samples ~ tokens per sample / accuracy).
    assert truth["bo8"] > 3 * truth["single"]
    assert outcomes["bo8"].tokens_per_success > 3 * outcomes["single"].tokens_per_success
    # No results file: the submitted answer is read as "any sample passes", and said so.
    assert any("bo8" in w and "oracle" in w for w in warnings)


def test_every_face_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, solved = simulate(seed=1)
    ledger, comps = write_inputs(tmp_path, rows, solved)
    truth = hand_count(solved)

    assert main(["elo", str(comps), "--ledger", str(ledger), "--format", "json"]) == 0
    players = {p["name"]: p for p in json.loads(capsys.readouterr().out)["players"]}
    for arm in ARMS:
        rec = players[arm]
        assert rec["tokens_per_success"] == pytest.approx(truth[arm])
        assert rec["pass_at_1"] == pytest.approx(solved[arm].mean())  # the submitted answer
        assert rec["solved"] == solved[arm].sum() and rec["sessions"] == TASKS
        per_sample = np.mean([r["passed"] for r in rows if r["arm"] == arm])
        assert rec["sample_accuracy"] == pytest.approx(per_sample)  # under its own name

    assert main(["elo", str(comps), "--ledger", str(ledger), "--wide"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].rstrip().endswith("tok/success")  # the last column, same label as JSON's
    for arm in ARMS:
        line = next(line for line in table if line.split()[:1] == [arm])
        assert line.split()[-1].replace(",", "") == f"{truth[arm]:.0f}"

    assert main([
        "fairness", str(ledger), "--old-1", "single", "--new-1", "single_b", "--old-n", "bo8",
        "--new-n", "bo8_b", "--bootstrap", "50", "--format", "json",
    ]) == 0  # fmt: skip
    record = json.loads(capsys.readouterr().out)
    for role, arm in (
        ("old_1", "single"),
        ("new_1", "single_b"),
        ("old_n", "bo8"),
        ("new_n", "bo8_b"),
    ):
        assert record["arms"][role]["tokens_per_success"] == pytest.approx(truth[arm], rel=1e-6)


async def test_tui_elo_tab_shows_the_same_tokens_per_success(tmp_path: Path) -> None:
    from eloledger.tui.app import EloLedgerApp
    from eloledger.tui.elo_tab import EloTab
    from eloledger.tui.testing import until

    rows, solved = simulate(seed=2)
    ledger, comps = write_inputs(tmp_path, rows, solved)
    truth = hand_count(solved)
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comps, ledger))
    async with app.run_test(size=(160, 40)):
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None)
        table = app.query_one("#elo-table", DataTable)

        def labels() -> list[str]:
            return [str(c.label) for c in table.columns.values()]

        assert await until(lambda: any(label.startswith("tok/success") for label in labels()))
        for arm in ARMS:
            cell = str(table.get_cell(arm, "tokens_per_success"))
            assert cell.replace(",", "") == f"{truth[arm]:.0f}"


def test_results_file_names_the_submitted_answer(tmp_path: Path, capsys) -> None:
    """With the run's results file, pass@1 and tokens per success follow the sample the arm
    submitted (here the results say bo8 submitted a failing answer on its first 50 tasks)."""
    rows, solved = simulate(seed=3)
    ledger, comps = write_inputs(tmp_path, rows, solved)
    submitted = {arm: solved[arm].copy() for arm in ARMS}
    submitted["bo8"][:50] = False
    with open(tmp_path / "run.results.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task_id", "arm", "session", "selected_sample", "answer", "score", "passed",
                    "samples_ok", "samples"])  # fmt: skip
        for arm, n in ARMS.items():
            for t in range(TASKS):
                ok = int(submitted[arm][t])
                w.writerow([f"t{t:03d}", arm, 0, 0, "", ok, ok, n, n])
    assert main(["elo", str(comps), "--ledger", str(ledger), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    bo8 = next(p for p in out["players"] if p["name"] == "bo8")
    assert bo8["pass_at_1"] == pytest.approx(submitted["bo8"].mean())
    assert bo8["tokens_per_success"] == pytest.approx(8 * TOKENS * TASKS / submitted["bo8"].sum())
    assert not any("oracle" in w for w in out["warnings"])


def test_failed_calls_count_as_billed_tokens_and_unsolved_attempts() -> None:
    """One rule: billed tokens count, failed calls included; a session whose
    calls all failed submitted nothing and is an unsolved attempt, not a skipped task."""
    rows = [
        {"task_id": "a", "arm": "x", "session": 0, "role": "sample", "status": "ok",
         "total_tokens": 100, "passed": True},
        {"task_id": "b", "arm": "x", "session": 0, "role": "sample", "status": "error",
         "total_tokens": 300},
    ]  # fmt: skip
    o = arm_outcomes(rows)[0]["x"]
    assert o.total_tokens == 400 and o.solved == 1 and o.sessions == 2
    assert o.tokens_per_success == 400


def test_tasks_an_arm_ran_but_was_never_compared_on_are_reported(tmp_path: Path, capsys) -> None:
    """An arm with no result on a task is not silently dropped from it."""
    rows, solved = simulate(seed=4)
    ledger, comps = write_inputs(tmp_path, rows, solved)
    lines = comps.read_text().splitlines()
    kept = [lines[0]] + [
        line for line in lines[1:]
        if not (line.startswith(("t000,", "t001,", "t002,")) and "bo8," in line + ",")
    ]  # fmt: skip
    comps.write_text("\n".join(kept) + "\n")
    assert main(["elo", str(comps), "--ledger", str(ledger), "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any("bo8 on 3 of 200" in w for w in warnings), warnings


def test_oracle_best_of_8_on_pass_fail_is_read_against_its_own_reference(tmp_path, capsys) -> None:
    """An oracle best-of-8 on pass/fail tasks gains far less than
    400 Elo per decade; the reference from its own samples says that is all it can gain."""
    rows, solved = simulate(seed=5)
    ledger, comps = write_inputs(tmp_path, rows, solved)
    assert main(["elo", str(comps), "--ledger", str(ledger), "--anchor", "single",
                 "--format", "json"]) == 0  # fmt: skip
    bo8 = next(p for p in json.loads(capsys.readouterr().out)["players"] if p["name"] == "bo8")
    assert bo8["elo_per_decade"] < 300  # far below the continuous law's 400
    assert bo8["passfail_reference_elo_per_decade"] < 300
    assert abs(bo8["elo_per_decade"] - bo8["passfail_reference_elo_per_decade"]) < 60
