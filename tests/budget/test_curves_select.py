"""What the arm table shows on scored tasks, and
``curve --split/--tag/--tasks`` (the selection, as tokens/elo/fairness have it).

The ledgers are the planted ones of tests/checkpoint_truth.py, written to files and read by the
real ``eloledger curve`` command (``eloledger.cli.main``) in a temporary HOME.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from checkpoint_truth import COST, planted_rows, write_ledger
from eloledger.budget.checkpoint_curves import checkpoint_curves
from eloledger.cli import main
from eloledger.ledger.prices import Price


def _labelled(seed: int) -> list[dict]:
    """Planted rows on 10 tasks: even tasks in split test and tagged 'hard', odd in train."""
    rows = planted_rows(seed, tasks=10, sessions=6, chat_arm=True)
    for row in rows:
        n = int(row["task_id"][4:])
        row["split"] = "test" if n % 2 == 0 else "train"
        row["tags"] = ["hard"] if n % 2 == 0 else ["easy"]
    return rows


def _curve_json(capsys: pytest.CaptureFixture, *argv: str) -> dict:
    assert main(["curve", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_split_and_tag_rate_only_their_tasks(tmp_path: Path, capsys) -> None:
    rows = _labelled(4)
    ledger = write_ledger(tmp_path / "all.jsonl", rows)
    only = write_ledger(tmp_path / "test.jsonl", [r for r in rows if r["split"] == "test"])
    want = _curve_json(capsys, str(only))
    for flags in (["--split", "test"], ["--tag", "hard"], ["--split", "test", "--tag", "hard"]):
        got = _curve_json(capsys, str(ledger), *flags)
        assert got["tasks"] == 5 and got["arms"] == want["arms"], flags
    everything = _curve_json(capsys, str(ledger))
    assert everything["tasks"] == 10 and everything["arms"] != want["arms"]


def test_tasks_file_labels_rows_that_lack_split(tmp_path: Path, capsys) -> None:
    rows = _labelled(5)
    bare = [{k: v for k, v in r.items() if k not in ("split", "tags")} for r in rows]
    ledger = write_ledger(tmp_path / "bare.jsonl", bare)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"task_id": f"task{n:02d}", "prompt": f"p{n}", "answer": "1",
                    "split": "test" if n % 2 == 0 else "train"}) + "\n" for n in range(10)
    ))  # fmt: skip
    chosen = _curve_json(capsys, str(ledger), "--split", "train", "--tasks", str(tasks))
    only = write_ledger(tmp_path / "train.jsonl", [r for r in rows if r["split"] == "train"])
    assert chosen["arms"] == _curve_json(capsys, str(only))["arms"]


def test_a_selection_with_no_rows_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    ledger = write_ledger(tmp_path / "all.jsonl", _labelled(6))
    assert main(["curve", str(ledger), "--split", "val"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2 and "split='val'" in err[0] and "Traceback" not in "".join(err)


def test_scored_tasks_get_a_median_based_accuracy() -> None:
    """Nothing passes or fails: acc = share of an arm's sessions at or above the task's median
    final score over all sessions. The planted beater ends with the best of 144 draws, the
    plateau with the best of 3: nearly every beater session is above the median, few
    plateau sessions are."""
    rows = planted_rows(8, tasks=8, sessions=6, chat_arm=True)
    result = checkpoint_curves(rows, prices={})
    finals: dict[str, list[tuple[str, float]]] = {}
    for r in rows:
        if r["role"] == "sample" and r["arm"] != "kshot":
            finals.setdefault(r["task_id"], []).append((r["arm"], r["score"]))
    kshot: dict[tuple[str, int], float] = {}  # a chat session's final value: its best reply
    for r in rows:
        if r["arm"] == "kshot":
            key = (r["task_id"], r["session"])
            kshot[key] = max(kshot.get(key, -1.0), r["score"])
    for (task, _), best in kshot.items():
        finals[task].append(("kshot", best))
    for arm in result.arms:
        hits = []
        for entries in finals.values():
            median = np.median([s for _, s in entries])
            hits += [s >= median for a, s in entries if a == arm.name]
        assert arm.accuracy_basis == "median"
        assert arm.accuracy == pytest.approx(np.mean(hits)), arm.name
    assert result.arm("beater").accuracy > 0.8 > 0.35 > result.arm("plateau").accuracy
    assert result.arm("sampler").cost_per_session is None  # no price: acc/$ stays blank


def test_prices_fill_cost_and_accuracy_per_dollar_off_the_cost_axis() -> None:
    rows = planted_rows(9, tasks=6, sessions=6, chat_arm=True)
    result = checkpoint_curves(rows, prices={"sim-model": Price(2.0, 8.0)})  # tokens axis
    per_token = (0.75 * 2.0 + 0.25 * 8.0) / 1e6
    arm = result.arm("sampler")
    assert arm.cost_per_session == pytest.approx(12 * COST * per_token)
    assert arm.accuracy_per_dollar == pytest.approx(arm.accuracy / arm.cost_per_session)
    from eloledger.cli import curve_cmd

    table = curve_cmd.render(result, "table")
    arms = table.split("against repeated sampling")[1]
    line = next(x for x in arms.splitlines() if x.startswith("sampler "))
    assert f"{arm.accuracy_per_dollar:.2f}" in line and f"{arm.accuracy:.3f}" in line
