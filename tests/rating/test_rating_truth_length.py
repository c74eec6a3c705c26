"""Length control against known truth.

* The scale s is the RMS of Δ, so the same judgments written winner/loser or a/b give the same
  β (the old s = sd(Δ) gave 279 vs 291).
* A judge with no length bias, where better answers are longer, still shows β > 0: β is the
  length-outcome association, and the faces say so.
* Lengths that are a player trait (constant per player) leave β weakly identified: a warning.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from eloledger.rating.comparisons import Comparisons
from eloledger.rating.length import length_controlled
from eloledger.report.elo_table import elo_report

THETA = np.array([0.0, 0.3, 0.6, 0.9])


def unbiased_judge(rng: np.random.Generator, tasks: int = 300, noise: float = 0.4):
    """No length term in the judge at all: it judges each answer's quality q = θ + ε; better
    answers are longer (length = exp(5 + q + noise)), as they often are."""
    n = THETA.size
    a, b = np.triu_indices(n, 1)
    quality = THETA[None, :] + rng.normal(0.0, 0.7, (tasks, n)) * (noise > 0)
    length = np.exp(5.0 + quality + rng.normal(0.0, noise, (tasks, n))).round()
    task = np.repeat(np.arange(tasks), a.size)
    a, b = np.tile(a, tasks), np.tile(b, tasks)
    d = quality[task, a] - quality[task, b]
    outcome = (rng.random(a.size) < 1 / (1 + np.exp(-d))).astype(float)
    return task, a, b, outcome, length[task, a], length[task, b]


def build(task, a, b, outcome, at, bt) -> Comparisons:
    names = np.array([f"p{k}" for k in range(THETA.size)])
    return Comparisons.from_arrays(task, names[a], names[b], outcome, a_tokens=at, b_tokens=bt)


def test_beta_does_not_depend_on_row_orientation() -> None:
    task, a, b, o, at, bt = unbiased_judge(np.random.default_rng(0))
    ab = length_controlled(build(task, a, b, o, at, bt), anchor=0)
    # the same judgments as winner/loser rows (outcome 1, the winner first)
    win = o == 1.0
    wl = build(
        task, np.where(win, a, b), np.where(win, b, a), np.ones_like(o),
        np.where(win, at, bt), np.where(win, bt, at),
    )  # fmt: skip
    other = length_controlled(wl, anchor=0)
    assert other.scale == pytest.approx(ab.scale, rel=1e-12)
    assert other.beta == pytest.approx(ab.beta, abs=1e-6)


def test_length_outcome_association_is_labelled_as_such() -> None:
    from eloledger.cli.elo_cmd import render_text

    comps = build(*unbiased_judge(np.random.default_rng(1)))
    report = elo_report(comps, anchor="p0", intervals="sandwich", length_control=True)
    assert report.length_coef["ci_low"] > 0  # no judge bias, yet β > 0: an association
    text = render_text(report, argparse.Namespace(format="table", wide=True, seed=0))
    assert "length-outcome association" in " ".join(text.split())


def test_lengths_constant_per_player_warn_weak_identification() -> None:
    task, a, b, o, at, bt = unbiased_judge(np.random.default_rng(2), tasks=100, noise=0.0)
    lc = length_controlled(build(task, a, b, o, at, bt), anchor=0)
    assert any("weakly identified" in w for w in lc.warnings)
    varied = length_controlled(build(*unbiased_judge(np.random.default_rng(2))), anchor=0)
    assert not any("weakly identified" in w for w in varied.warnings)
