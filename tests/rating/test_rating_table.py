"""The Elo-per-token table: frontier and dominated arms, pass@k, tokens per success, anchors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from eloledger.budget.outcomes import pass_at_k
from eloledger.errors import UserError
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report, marginal_frontier


@dataclass
class ArmCost:
    """Shaped like eloledger.budget.outcomes.ArmOutcome (the fields the table reads)."""

    arm: str
    tokens_per_task: float | None
    tasks: int = 0
    successes: int = 0
    per_task_n: dict[str, int] = field(default_factory=dict)
    per_task_c: dict[str, int] = field(default_factory=dict)
    per_task_sessions: dict[str, int] | None = None
    per_task_solved: dict[str, int] | None = None


def test_frontier_marks_dominated_arms() -> None:
    tokens = np.array([1000.0, 2000.0, 3000.0, 4000.0, 5000.0, np.nan])
    elo = np.array([1000.0, 1100.0, 1120.0, 1250.0, 1200.0, 1300.0])
    marginal, dominated = marginal_frontier(tokens, elo)
    # (3000, 1120) lies below the chord from (2000, 1100) to (4000, 1250): dominated.
    # (5000, 1200) costs more than (4000, 1250) for less Elo: dominated.
    assert dominated == [False, False, True, False, True, None]
    assert (
        marginal[0] is None and marginal[2] is None and marginal[4] is None and marginal[5] is None
    )
    assert marginal[1] == pytest.approx(100.0)
    assert marginal[3] == pytest.approx(150.0 / 2.0)


def test_frontier_equal_tokens_and_collinear() -> None:
    tokens = np.array([1000.0, 1000.0, 2000.0, 3000.0])
    elo = np.array([1000.0, 1050.0, 1150.0, 1250.0])
    marginal, dominated = marginal_frontier(tokens, elo)
    assert dominated == [True, False, False, False]
    assert marginal[2] == pytest.approx(100.0) and marginal[3] == pytest.approx(100.0)


def test_pass_at_k_matches_the_binomial_formula() -> None:
    for n in (1, 5, 20, 60):
        for c in range(n + 1):
            for k in (1, 2, 5, n):
                if k > n:
                    continue
                exact = 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)
    # Numerically stable where the binomials would overflow a float.
    assert 0.0 < pass_at_k(2000, 1, 10) < 0.01
    assert pass_at_k(2000, 1, 10) == pytest.approx(10 / 2000)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def comps() -> Comparisons:
    rows = [
        ("t1", "cheap", "mid", 0.0),
        ("t1", "cheap", "big", 0.0),
        ("t1", "mid", "big", 0.5),
        ("t2", "cheap", "mid", 1.0),
        ("t2", "cheap", "big", 0.0),
        ("t2", "mid", "big", 0.0),
        ("t3", "cheap", "mid", 0.0),
        ("t3", "mid", "big", 1.0),
        ("t3", "big", "cheap", 1.0),
    ]
    t, a, b, o = zip(*rows, strict=True)
    return Comparisons.from_arrays(list(t), list(a), list(b), list(o))


def costs() -> dict[str, ArmCost]:
    return {
        "cheap": ArmCost(
            "cheap", 400.0, 3, 1, {"t1": 1, "t2": 1, "t3": 1}, {"t1": 0, "t2": 1, "t3": 0}
        ),
        "mid": ArmCost(
            "mid", 1600.0, 3, 5, {"t1": 4, "t2": 4, "t3": 4}, {"t1": 2, "t2": 0, "t3": 3},
            {"t1": 1, "t2": 1, "t3": 1}, {"t1": 1, "t2": 0, "t3": 1},
        ),  # fmt: skip
        "big": ArmCost(
            "big", 6400.0, 3, 9, {"t1": 8, "t2": 8, "t3": 8}, {"t1": 1, "t2": 4, "t3": 4}
        ),
        "unrated": ArmCost("unrated", 10.0, 1, 0),
    }


def test_report_with_costs() -> None:
    report = elo_report(comps(), costs=costs(), bootstrap_rounds=50, seed=3)
    rows = {r["name"]: r for r in report.players}
    assert report.anchor == "cheap" and rows["cheap"]["elo"] == 1000.0
    assert any("ledger arms with no comparisons" in w and "unrated" in w for w in report.warnings)
    mid, big = rows["mid"], rows["big"]
    assert mid["delta_elo"] == pytest.approx(mid["elo"] - 1000.0)
    assert mid["delta_elo_per_1k"] == pytest.approx(mid["delta_elo"] / 1.2)
    assert big["elo_per_decade"] == pytest.approx(big["delta_elo"] / math.log10(16))
    assert big["raw_elo_per_1k"] == pytest.approx(big["elo"] / 6.4)
    assert rows["cheap"]["delta_elo_per_1k"] is None and rows["cheap"]["elo_per_decade"] is None
    # Per-sample accuracy is the mean over tasks of c/n; pass@k uses k = samples per task (4).
    assert mid["sample_accuracy"] == pytest.approx(np.mean([2 / 4, 0 / 4, 3 / 4]))
    assert mid["pass_k"] == 4 and mid["pass_at_k"] == pytest.approx(2 / 3)
    # pass@1 is the submitted answer's (one session a task, solved on t1 and t3), and tokens
    # per success are tokens per *solved task*: 1600 tokens/task * 3 tasks / 2 solved -- the
    # old 1600 * 3 / 5 counted passing samples.
    assert mid["pass_at_1"] == pytest.approx(2 / 3)
    assert mid["tokens_per_success"] == pytest.approx(1600 * 3 / 2)
    # Without solved sessions, only an arm of one sample a task has them (its sample).
    assert rows["cheap"]["tokens_per_success"] == pytest.approx(1200.0)
    assert rows["cheap"]["pass_at_1"] == pytest.approx(1 / 3)
    assert rows["big"]["tokens_per_success"] is None and rows["big"]["pass_at_1"] is None
    # Intervals and ranks exist; the records are sorted by Elo, best first.
    elos = [r["elo"] for r in report.players]
    assert elos == sorted(elos, reverse=True)
    assert all(r["ci_low"] <= r["elo"] + 1e-9 or r["name"] == "cheap" for r in report.players)
    assert [r["rank"] for r in report.players] == [1, 2, 3]


def test_anchor_rules() -> None:
    c = comps()
    assert elo_report(c, bootstrap_rounds=0).anchor == "cheap"  # first player without costs
    explicit = elo_report(c, costs=costs(), anchor="big", bootstrap_rounds=0)
    assert explicit.anchor == "big"
    assert next(r for r in explicit.players if r["name"] == "big")["elo"] == 1000.0
    with pytest.raises(UserError, match="no player named 'nobody'.*cheap, mid, big"):
        elo_report(c, anchor="nobody", bootstrap_rounds=0)


def test_missing_usage_leaves_token_columns_empty() -> None:
    partial = costs()
    partial["mid"] = ArmCost("mid", None, 3)
    report = elo_report(comps(), costs=partial, bootstrap_rounds=0)
    mid = next(r for r in report.players if r["name"] == "mid")
    assert mid["tokens_per_task"] is None and mid["marginal_elo_per_1k"] is None
    assert mid["dominated"] is None
    assert any("no token usage in the ledger for: mid" in w for w in report.warnings)


def test_task_weight_and_prior_reported() -> None:
    report = elo_report(comps(), bootstrap_rounds=0, task_weight="equal", prior=0.2)
    assert report.to_json()["task_weight"] == "equal" and report.prior == 0.2
