"""The reference law: best-of-k of i.i.d. continuous scores gains 400·log10(k) Elo over
best-of-1, and the marginal Elo per 1K tokens falls as tokens double.

Why the law is exact: the best of k i.i.d. continuous draws beats the best of m independent
draws with probability k/(k+m) (the overall maximum of k+m exchangeable draws is equally likely
to be any of them), which is Bradley–Terry with strength k, i.e. θ = ln k and
Elo = 400·log10(k) over best-of-1.
"""

from __future__ import annotations

import math

import numpy as np

from eloledger.rating.bootstrap import bootstrap
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report

KS = (1, 2, 4, 8, 16)
TOKENS_PER_SAMPLE = 500


def best_of_k_comparisons(tasks: int, seed: int) -> Comparisons:
    rng = np.random.default_rng(seed)
    names = [f"best_of_{k}" for k in KS]
    task_ids, a, b, out = [], [], [], []
    for t in range(tasks):
        difficulty = rng.normal()  # shared by every sample of the task: does not change the law
        best = [float((difficulty + rng.normal(size=k)).max()) for k in KS]
        for x in range(len(KS)):
            for y in range(x + 1, len(KS)):
                task_ids.append(t)
                a.append(names[x])
                b.append(names[y])
                out.append(1.0 if best[x] > best[y] else 0.0)
    return Comparisons.from_arrays(task_ids, a, b, out, players=names)


def test_best_of_k_gains_400_log10_k() -> None:
    comps = best_of_k_comparisons(3000, seed=2026)
    report = elo_report(comps, anchor="best_of_1", bootstrap_rounds=0)
    elo = {r["name"]: r["elo"] for r in report.players}
    boot = bootstrap(comps, rounds=200, seed=1, anchor=0)
    se = boot.elo_samples.std(axis=0)
    assert elo["best_of_1"] == 1000.0
    for idx, k in enumerate(KS[1:], start=1):
        expected = 400.0 * math.log10(k)
        gain = elo[f"best_of_{k}"] - 1000.0
        # The tolerance is the sampling error measured by the task bootstrap (4 SE), and that
        # error is small enough for the test to mean something.
        assert se[idx] < 20.0
        assert abs(gain - expected) < 4.0 * se[idx], (k, gain, expected, se[idx])


def test_marginal_elo_per_1k_falls_as_tokens_double() -> None:
    comps = best_of_k_comparisons(3000, seed=7)
    costs = {
        f"best_of_{k}": {"tokens_per_task": float(k * TOKENS_PER_SAMPLE), "tasks": 3000} for k in KS
    }
    report = elo_report(comps, costs=costs, bootstrap_rounds=0)
    assert report.anchor == "best_of_1"  # the cheapest arm by default
    rows = sorted(report.players, key=lambda r: r["tokens_per_task"])
    marginal = [r["marginal_elo_per_1k"] for r in rows]
    assert marginal[0] is None  # the cheapest arm has no step before it
    assert all(m is not None and m > 0 for m in marginal[1:])
    assert all(later < earlier for earlier, later in zip(marginal[1:], marginal[2:], strict=False))
    # Doubling tokens adds ~120 Elo each time, so the marginal value roughly halves.
    for earlier, later in zip(marginal[1:], marginal[2:], strict=False):
        assert 0.3 < later / earlier < 0.7
    assert not any(r["dominated"] for r in rows)
    # Elo per tenfold tokens over the anchor is the reference 400.
    for r in rows[1:]:
        assert abs(r["elo_per_decade"] - 400.0) < 40.0
