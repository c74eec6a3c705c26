"""ΔElo per 1K tokens intervals carry the tokens' own sampling error, drawn with the Elo.

Arms that spend within 1-1.5x of each other's tokens (chain of thought): the token difference
is small and noisy, so holding tokens fixed gave "95%" intervals that held the true ΔElo/1K in
about 0.8 of runs. Larger runs: bench/study_intervals.py.
"""

from __future__ import annotations

import numpy as np

from eloledger.budget.sampling_sim import COT_ELO, cot_arms, cot_true_tokens
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report


def _report(tasks: int, seed: int):
    rows, costs = cot_arms(tasks, seed)
    t, a, b, o = zip(*rows, strict=True)
    comps = Comparisons.from_arrays(list(t), list(a), list(b), list(o))
    return elo_report(comps, costs=costs, anchor="base", intervals="sandwich", seed=seed)


def _truth(arm: str) -> float:
    return COT_ELO[arm] / ((cot_true_tokens(arm) - cot_true_tokens("base")) / 1000.0)


def test_delta_elo_per_1k_intervals_cover_when_tokens_are_close() -> None:
    hits = []
    for seed in range(60):
        players = {p["name"]: p for p in _report(50, seed).players}
        for arm in ("cot", "cot_long"):
            p = players[arm]
            hits.append(p["delta_elo_per_1k_low"] <= _truth(arm) <= p["delta_elo_per_1k_high"])
    assert np.mean(hits) >= 0.92, np.mean(hits)  # tokens held fixed: 0.83


def test_an_arm_without_per_task_tokens_keeps_its_tokens_fixed() -> None:
    """Costs given as a bare tokens_per_task still get intervals (the Elo's alone)."""
    rows, costs = cot_arms(20, 1)
    t, a, b, o = zip(*rows, strict=True)
    comps = Comparisons.from_arrays(list(t), list(a), list(b), list(o))
    bare = {k: {"tokens_per_task": v["tokens_per_task"]} for k, v in costs.items()}
    full = {p["name"]: p for p in elo_report(comps, costs=costs, anchor="base",
                                              intervals="sandwich").players}  # fmt: skip
    fixed = {p["name"]: p for p in elo_report(comps, costs=bare, anchor="base",
                                               intervals="sandwich").players}  # fmt: skip
    for arm in ("cot", "cot_long"):
        assert full[arm]["delta_elo_per_1k"] == fixed[arm]["delta_elo_per_1k"]
        wide = full[arm]["delta_elo_per_1k_high"] - full[arm]["delta_elo_per_1k_low"]
        narrow = fixed[arm]["delta_elo_per_1k_high"] - fixed[arm]["delta_elo_per_1k_low"]
        assert wide > narrow > 0
