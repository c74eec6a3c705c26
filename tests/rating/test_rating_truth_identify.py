"""What the data cannot identify gets no finite tight interval, with truth.

* A player who never loses (true +1,192 over the anchor): only a lower bound, which covers
  the truth; the upper end is +inf (the old fallback prior gave ±160 / ±58 / ±28).
* Two groups never compared: the other group's players get no Elo against the anchor (their
  old 976 [936, 1016] was the prior's), a within-group ``group_elo`` that is right, and rank
  intervals that allow for them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from eloledger.budget.sampling_sim import round_robin
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report

TRUE = {"p0": 0, "p1": 100, "p2": 200, "p3": 300, "top": 1192}


def comparisons(rows: list[tuple]) -> Comparisons:
    t, a, b, o = zip(*rows, strict=True)
    return Comparisons.from_arrays(list(t), list(a), list(b), list(o))


@pytest.mark.parametrize("tasks", [10, 50, 200])
def test_a_player_who_never_loses_gets_a_one_sided_bound_that_covers_the_truth(tasks) -> None:
    seen = covered = 0
    for seed in range(25):
        rows = round_robin(TRUE, tasks, np.random.default_rng(seed))
        report = elo_report(comparisons(rows), anchor="p0", intervals="sandwich")
        top = next(p for p in report.players if p["name"] == "top")
        if top["wins"] < top["games"]:
            continue  # it lost once: the MLE exists and the ordinary interval applies
        seen += 1
        assert top["identified"] == "lower_bound"
        assert top["ci_high"] == np.inf and np.isfinite(top["ci_low"])
        covered += top["ci_low"] <= 1000 + TRUE["top"]
        assert top["rank_low"] == 1
        assert any("one-sided bound" in w for w in report.warnings)
    assert seen >= 3
    assert covered / seen >= 0.9


def test_disconnected_groups_are_not_identified_against_the_anchor(capsys) -> None:
    from eloledger.cli.elo_cmd import render_text

    rng = np.random.default_rng(1)
    left = {"a": 0, "b": 100, "c": 200}
    right = {"d": 300, "e": 347, "f": 500}
    rows = round_robin(left, 150, rng) + round_robin(right, 150, rng)
    report = elo_report(comparisons(rows), anchor="a", intervals="sandwich")
    players = {p["name"]: p for p in report.players}
    for name in right:
        p = players[name]
        assert p["identified"] == "no" and p["elo"] is None
        assert p["ci_low"] == -np.inf and p["ci_high"] == np.inf
        assert (p["rank_low"], p["rank_high"]) == (1, 6)
        assert p["group"] == "d"
        assert p["group_elo"] == pytest.approx(1000 + right[name] - right["d"], abs=60)
    for name in left:  # identified within the anchor's group; ranks allow for the others
        p = players[name]
        assert p["identified"] == "yes"
        assert p["ci_low"] <= 1000 + left[name] <= p["ci_high"]
        assert p["rank_high"] - p["rank_low"] >= 3
    assert any("not identified" in w for w in report.warnings)
    # The faces: the CLI prints n/a, the JSON null; nothing pretends to be a finite interval.
    import argparse

    text = render_text(report, argparse.Namespace(format="table", wide=True, seed=0))
    line = next(line for line in text.splitlines() if line.split()[:1] == ["e"])
    assert "n/a" in line
    from eloledger.tables import to_json

    e = next(p for p in json.loads(to_json(report.to_json()))["players"] if p["name"] == "e")
    assert e["elo"] is None and e["ci_low"] is None and e["identified"] == "no"


def test_a_connected_pool_is_untouched() -> None:
    rows = round_robin({"x": 0, "y": 50, "z": 120}, 40, np.random.default_rng(2))
    report = elo_report(comparisons(rows), anchor="x", intervals="sandwich")
    assert all("identified" not in p for p in report.players)
    assert all(np.isfinite(p["ci_low"]) and np.isfinite(p["ci_high"]) for p in report.players)
