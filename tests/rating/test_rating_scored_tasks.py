"""Scored (optimisation) tasks rank by score, in the direction the task says."""

from __future__ import annotations

import numpy as np
import pytest

from eloledger.budget.curves import budget_curves
from eloledger.budget.sessions import row_pass, row_score
from eloledger.errors import UserError
from eloledger.rating.bt import aggregate, fit_bt, to_elo
from eloledger.rating.comparisons import scored_comparisons

# Planted order: on every task, arm "good" scores best, "mid" next, "bad" worst; "twin" ties mid.
QUALITY = {"good": 3.0, "mid": 2.0, "twin": 2.0, "bad": 1.0}


def _rows(direction: str, seed: int = 0, tasks: int = 12) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        offset = rng.normal(0, 50)  # tasks differ in scale: only the order within a task counts
        for arm, q in QUALITY.items():
            for s in range(3):
                value = offset + q + (0.0 if arm in ("mid", "twin") else rng.normal(0, 0.2))
                raw = -value if direction == "min" else value  # "min": lower is better
                rows.append({"task_id": f"t{t}", "arm": arm, "session": s, "role": "sample",
                             "status": "ok", "total_tokens": 100 * (s + 1), "score": raw,
                             "passed": None, "direction": direction})  # fmt: skip
    return rows


@pytest.mark.parametrize("direction", ["max", "min"])
def test_scored_rows_rank_by_score_in_the_tasks_direction(direction: str) -> None:
    comps = scored_comparisons(_rows(direction))
    fit = fit_bt(aggregate(comps), prior=0.0)
    elo = dict(zip(comps.players, to_elo(fit.theta, comps.players.index("bad")), strict=True))
    assert elo["good"] > elo["mid"] > elo["bad"], elo
    # mid and twin score exactly the same on every task: ties split 0.5, so equal Elo
    assert elo["mid"] == pytest.approx(elo["twin"], abs=1e-6)
    soft = comps.outcome[(np.array(comps.players)[comps.i] == "mid")
                         & (np.array(comps.players)[comps.j] == "twin")]  # fmt: skip
    assert np.allclose(soft, 0.5)


def test_direction_min_and_max_give_the_same_comparisons() -> None:
    up, down = scored_comparisons(_rows("max")), scored_comparisons(_rows("min"))
    assert up.players == down.players
    assert np.array_equal(up.outcome, down.outcome)


def test_scored_rows_have_no_pass_fail_and_a_signed_score() -> None:
    row = {"status": "ok", "score": 7.0, "passed": None, "direction": "min"}
    assert row_score(row) == -7.0
    assert row_pass(row) is None  # a raw score of 7 is no share of tests passed
    assert row_pass({**row, "passed": True}) == 1.0  # a scored task with tests keeps them
    assert row_score({"status": "ok", "score": 0.25}) == 0.25  # no direction: as before


def test_budget_curves_follow_the_direction() -> None:
    """Old code read every score as higher-is-better: a 'min' task's best arm came out last."""
    result = budget_curves(_rows("min"), bootstrap=0)
    last = {a.name: float(a.elo[-1]) for a in result.arms}
    assert last["good"] > last["mid"] > last["bad"], last


def test_no_two_scored_players_is_a_one_line_error() -> None:
    rows = [r for r in _rows("max") if r["arm"] == "good"]
    with pytest.raises(UserError, match="no two players"):
        scored_comparisons(rows)
