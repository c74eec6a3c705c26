"""Many arms against one anchor: simultaneous intervals, the count of arms in the output, and
pass@k over the same tasks as pass@1.

With 8 equal arms, 95% intervals one at a time show some arm "apart" from the anchor in about
a quarter of runs; --simultaneous (Bonferroni over the arms) holds all of them together.
"""

from __future__ import annotations

import json

import numpy as np

from eloledger.budget.outcomes import arm_outcomes
from eloledger.budget.sampling_sim import round_robin
from eloledger.cli import main
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report

EQUAL = {f"arm{k}": 0.0 for k in range(9)}  # the anchor and 8 equal arms


def _any_apart(seed: int, simultaneous: bool) -> bool:
    t, a, b, o = zip(*round_robin(EQUAL, 30, np.random.default_rng(seed)), strict=True)
    comps = Comparisons.from_arrays(list(t), list(a), list(b), list(o))
    report = elo_report(comps, anchor="arm0", intervals="sandwich", simultaneous=simultaneous)
    assert report.arms_compared == 8
    return any(not p["ci_low"] <= 1000.0 <= p["ci_high"] for p in report.players)


def test_simultaneous_intervals_hold_together_across_arms() -> None:
    alone = [_any_apart(seed, False) for seed in range(40)]
    together = [_any_apart(seed, True) for seed in range(40)]
    assert np.mean(alone) >= 0.15  # one at a time: the family-wise error the audit saw
    assert np.mean(together) <= 0.05, np.mean(together)


def test_elo_says_how_many_arms_were_compared(capsys) -> None:
    assert main(["elo", "--example"]) == 0
    out = capsys.readouterr().out
    assert "4 arm(s) compared with the anchor; each interval is 95% on its own" in out
    assert main(["elo", "--example", "--simultaneous", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["intervals"]["arms_compared"] == 4 and data["intervals"]["simultaneous"]
    assert abs(data["intervals"]["per_interval_level"] - (1 - 0.05 / 4)) < 1e-12
    assert main(["elo", "--example", "--simultaneous"]) == 0
    assert "hold for all of them together (95% family-wise" in capsys.readouterr().out


def _call(task: int, ok: bool, passed: bool | None = None) -> dict:
    row = {"task_id": f"t{task}", "arm": "solo", "session": f"s{task}", "sample": 0,
           "role": "sample", "status": "ok" if ok else "error", "usage_source": "server",
           "total_tokens": 100}  # fmt: skip
    if passed is not None:
        row["passed"] = passed
    return row


def test_pass_at_k_counts_a_task_whose_calls_all_failed_as_a_failure() -> None:
    """Five tasks, one sample each; on t4 the call failed. pass@1 = 3/5: so must pass@k at
    k = 1 and the per-sample accuracy be (they dropped t4 and read 3/4)."""
    rows = [_call(0, True, True), _call(1, True, True), _call(2, True, True),
            _call(3, True, False), _call(4, False)]  # fmt: skip
    costs, _ = arm_outcomes(rows)
    comps = Comparisons.from_arrays(["t0", "t1"], ["solo", "solo"], ["other", "other"], [1.0, 0.0])
    report = elo_report(comps, costs=costs, anchor="other", intervals="none")
    solo = next(p for p in report.players if p["name"] == "solo")
    assert solo["pass_at_1"] == 0.6
    assert solo["pass_k"] == 1
    assert solo["pass_at_k"] == 0.6 and solo["sample_accuracy"] == 0.6
