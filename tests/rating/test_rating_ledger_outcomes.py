"""`elo --ledger` reads the ledger by columns again, with identical results.

``ledger_outcomes`` used to build every canonical row one at a time: ~5 s per 128k
rows. It now reads the columns ``arm_outcomes`` needs with the columnar reader (and its bulk
duplicate check) and hands it light rows. The reference below is the row path as it was;
both must agree on a varied ledger: results files, judge/probe/checkpoint rows, unsandboxed
rows, agent rows cut by a limit, missing usage (imputed at the median), sessions written as
0 and "0", duplicates across files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eloledger.budget.files import load_rows
from eloledger.budget.outcomes import arm_outcomes, ledger_outcomes, ledger_results
from eloledger.ledger.merge import read_ledgers
from eloledger.ledger.summary import TOKEN_COUNT_COLUMNS, count_warnings


def row_path_outcomes(ledgers: Any) -> tuple[dict, list[str]]:
    """``ledger_outcomes`` line by line, as it once was (canonical rows, line by line)."""
    rows, warnings = load_rows(ledgers)
    results = ledger_results(ledgers)
    outcomes, more = arm_outcomes(rows, results=results)
    counts = count_warnings(read_ledgers(ledgers, columns=TOKEN_COUNT_COLUMNS))
    return outcomes, [*warnings, *counts, *more]


def varied(seed: int, n: int, prefix: str = "") -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "task_id": f"{prefix}t{rng.integers(0, 9)}",
            "arm": str(rng.choice(["single", "bo4", "agent_a", "7"])),
            "ts": 1.7e9 + i,
        }
        if rng.random() < 0.03:
            del row["arm"]
        role = rng.choice(["sample", "sample", "select", "judge", "probe", "checkpoint", None])
        if role is not None:
            row["role"] = str(role)
        session = rng.choice([0, "0", 1, "s2", None, 1.0])
        if session is not None:
            row["session"] = session.item() if hasattr(session, "item") else session
        if rng.random() < 0.8:
            row["sample"] = int(rng.integers(0, 4))
        if rng.random() < 0.3:
            row["round"] = int(rng.integers(0, 2))
        status = rng.choice(["ok", "ok", "error", None])
        if status is not None:
            row["status"] = str(status)
        if row.get("arm") == "agent_a":
            row["agent"] = "claude-code"
            if row.get("status") == "error":
                row["error_class"] = str(rng.choice(["max_turns", "timeout", "crash"]))
        if rng.random() < 0.85:
            p, c = int(rng.integers(1, 400)), int(rng.integers(1, 200))
            row.update(prompt_tokens=p, completion_tokens=c)
            if rng.random() < 0.7:
                row["total_tokens"] = p + c
            row["usage_source"] = str(rng.choice(["server", "server", "estimated"]))
        elif rng.random() < 0.5:
            row["usage_source"] = "missing"
        judged = rng.random()
        if judged < 0.4:
            row["passed"] = bool(rng.random() < 0.5)
        elif judged < 0.7:
            row["score"] = float(np.round(rng.random(), 2))
        elif judged < 0.8:
            row["passed"] = int(rng.integers(0, 2))
        if rng.random() < 0.1:
            row["sandbox"] = "none" if rng.random() < 0.5 else "bwrap"
        if row.get("task_id", "").endswith("t8"):  # a scored (optimisation) task
            row["direction"] = str(rng.choice(["max", "min"]))
            if rng.random() < 0.8:
                row.pop("passed", None)
                row["score"] = float(np.round(rng.random() * 4, 2))
        rows.append(row)
    return rows


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_results(ledger: Path, rows: list[dict[str, Any]]) -> None:
    """The run's submitted answers for some sessions (``x.results.csv`` beside ``x.jsonl``)."""
    path = ledger.with_name(ledger.name.removesuffix(".jsonl") + ".results.csv")
    with path.open("w", newline="") as fh:
        out = csv.DictWriter(fh, ["task_id", "arm", "session", "passed", "score"])
        out.writeheader()
        for i, row in enumerate(rows[::7]):
            if "arm" in row:
                passed = ["true", "0", ""][i % 3]
                score = "" if passed else "0.75"
                session = row.get("session")
                out.writerow(
                    {"task_id": row["task_id"], "arm": row["arm"], "passed": passed,
                     "score": score, "session": "" if session is None else session}
                )  # fmt: skip


def same(got: tuple[dict, list[str]], want: tuple[dict, list[str]]) -> None:
    assert list(got[0]) == list(want[0])
    for arm in want[0]:
        assert got[0][arm] == want[0][arm], arm
    assert got[1] == want[1]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_columnar_outcomes_equal_the_row_path(tmp_path: Path, seed: int) -> None:
    rows = varied(seed, 900)
    ledger = write(tmp_path / "run.jsonl", rows)
    write_results(ledger, rows)
    want = row_path_outcomes(ledger)
    assert any("UNSANDBOXED" in w for w in want[1])  # the varied ledger meets every rule
    assert any("median" in w for w in want[1]) and any("oracle" in w for w in want[1])
    assert {o.submitted for o in want[0].values()} >= {"results+select+single+any-pass"} or any(
        "results" in o.submitted for o in want[0].values()
    )
    same(ledger_outcomes(ledger), want)


def test_several_ledgers_with_duplicates_and_a_torn_tail(tmp_path: Path) -> None:
    a_rows, b_rows = varied(4, 500), varied(5, 400, prefix="b")
    a = write(tmp_path / "a.jsonl", a_rows)
    b = write(tmp_path / "b.jsonl", b_rows + a_rows[:30])  # a shard that repeats 30 calls
    with b.open("a") as fh:
        fh.write('{"arm": "single", "task_id": "t1", "total_tok')
    write_results(a, a_rows)
    want = row_path_outcomes([a, b])
    assert any("duplicate" in w for w in want[1]) and any("torn" in w for w in want[1])
    same(ledger_outcomes([a, b]), want)


def test_elo_ledger_ignores_checkpoint_rows(tmp_path: Path) -> None:
    """the checkpoint rows (no token fields) are neither calls nor sessions."""
    rows = [
        {"arm": a, "task_id": f"t{t}", "session": 0, "role": "sample", "status": "ok",
         "total_tokens": 100 if a == "x" else 300, "passed": (t + (a == "x")) % 2 == 0,
         "ts": float(t * 2 + (a == "x"))}
        for t in range(6) for a in ("x", "y")
    ]  # fmt: skip
    plain = write(tmp_path / "plain.jsonl", rows)
    marked = write(
        tmp_path / "marked.jsonl",
        rows + [{"arm": "x", "task_id": "t9", "session": 0, "role": "checkpoint", "ts": 99.0}],
    )
    before, after = ledger_outcomes(plain), ledger_outcomes(marked)
    same(after, before)
    assert after[0]["x"].tasks == 6  # t9 holds only a checkpoint: not a task the arm ran


def test_a_scored_task_has_no_pass_or_fail_in_the_elo_table(tmp_path: Path) -> None:
    """Rows of an optimisation task (a ``direction``, a score, no ``passed``) have no pass/fail:
    the columns ``elo --ledger`` reads must carry the direction, else a score of 3.0 where
    lower is better counted as a solved task."""
    rows = [
        {"task_id": f"t{t}", "arm": arm, "sample": 0, "role": "sample", "status": "ok",
         "total_tokens": 15, "score": 3.0 if arm == "a" else 0.2, "direction": "min",
         "ts": 1.0 + t}
        for t in range(4) for arm in ("a", "b")
    ]  # fmt: skip
    ledger = write(tmp_path / "scored.jsonl", rows)
    got = ledger_outcomes(ledger)
    assert [(o.solved, o.scored) for o in got[0].values()] == [(0, False), (0, False)]
    same(got, row_path_outcomes(ledger))
