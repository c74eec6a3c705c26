"""With fewer tasks than intervals need, the checkpoint fit says so.

A task-clustered sandwich with K tasks has K clusters: its t quantile has K - 1 degrees of
freedom (12.7 at K = 2) and the demo printed intervals like [-8952, 12494] for every point.
Below MIN_TASKS the table, the CSV and the JSON show point estimates and a note instead.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from checkpoint_truth import planted_rows
from eloledger.budget.checkpoint_curves import MIN_TASKS, checkpoint_curves
from eloledger.cli import curve_cmd


def _args(fmt: str) -> argparse.Namespace:
    return argparse.Namespace(grid=1.5, bootstrap=200, seed=0, resample="tasks", axis="tokens",
                              format=fmt)  # fmt: skip


def test_two_tasks_give_point_estimates_and_a_note_not_intervals() -> None:
    rows = planted_rows(3, tasks=2, sessions=6, chat_arm=True)
    result = checkpoint_curves(rows)
    note = f"intervals need >= {MIN_TASKS} tasks; these have 2"
    assert result.tasks == 2 and result.intervals_note.startswith(note)
    for arm in result.arms:
        assert np.isfinite(arm.elo).all()  # the estimates stay
        assert np.isnan(arm.ci_low).all() and np.isnan(arm.gap_high).all()
        assert arm.verdict is None and arm.slows_down_after is None
    table = curve_cmd.render(result, "table")
    assert note in " ".join(table.split())
    assert "[" not in table.split("against repeated sampling")[0]  # no interval printed
    data = result.to_dict()
    assert data["intervals"] == {"min_tasks": MIN_TASKS, "shown": False,
                                 "note": result.intervals_note}  # fmt: skip
    point = data["arms"][0]["points"][1]
    assert point["ci_low"] is None and point["gap_ci"] == [None, None]
    assert point["elo"] is not None and data["arms"][0]["verdict"] is None
    json.dumps(data, allow_nan=False)  # NaN never reaches the JSON


def test_enough_tasks_keep_intervals_and_verdicts() -> None:
    result = checkpoint_curves(planted_rows(3, tasks=MIN_TASKS, sessions=6))
    assert result.tasks == MIN_TASKS and result.intervals_note is None
    assert result.to_dict()["intervals"]["shown"] is True
    for arm in result.arms:
        assert all(math.isfinite(x) for x in arm.ci_low) and arm.verdict is not None
    assert "note:" not in curve_cmd.render(result, "table")
