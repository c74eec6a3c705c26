"""The checkpoint verdict against repeated sampling when scores tie (pass/fail, rubric levels).

An agent that is an exact repeated sampler (its work after n tries is the best of n draws)
must read "on" its line; the old verdict (pooled fit against a tie-free or separately fitted
line) called it "below" in most runs with pass/fail scores at 20 tasks x 4 sessions. Larger
runs: bench/study_checkpoint_verdict.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from eloledger.budget.checkpoint_curves import checkpoint_curves
from eloledger.budget.checkpoint_sim import agent_rows
from eloledger.budget.sampling_line import paired_gap, win_against_best_of_k


def _verdicts(reps: int, **design) -> list[str | None]:
    return [
        checkpoint_curves(agent_rows(rep, **design), seed=rep, prices={}).arms[0].verdict
        for rep in range(reps)
    ]


@pytest.mark.parametrize(
    ("kind", "tasks", "sessions"),
    [("passfail", 20, 4), ("passfail", 6, 3), ("levels", 20, 4), ("continuous", 6, 3)],
)
def test_an_exact_sampler_reads_on_its_line(kind: str, tasks: int, sessions: int) -> None:
    verdicts = _verdicts(16, tasks=tasks, sessions=sessions, kind=kind)
    false = sum(v in ("above", "below") for v in verdicts)
    assert None not in verdicts
    assert false <= 3, verdicts  # a 95% test: ~1 in 20; the old verdict: 11 of 16 "below"


def test_two_sessions_per_task_say_too_few_sessions() -> None:
    result = checkpoint_curves(agent_rows(1, tasks=20, sessions=2), seed=1, prices={})
    arm = result.arms[0]
    assert arm.verdict is None
    assert arm.verdict_note is not None and arm.verdict_note.startswith("too few sessions")
    assert "needs 3 sessions" in arm.verdict_note
    assert result.to_dict()["arms"][0]["verdict_note"] == arm.verdict_note
    assert set(arm.line_kind[1:]) <= {"paired", "law"}


@pytest.mark.parametrize(("shape", "want"), [("plateau", "below"), ("beater", "above")])
def test_a_real_difference_is_found(shape: str, want: str) -> None:
    verdicts = _verdicts(6, tasks=20, sessions=6, kind="continuous", shape=shape)
    assert verdicts.count(want) >= 5, verdicts


def test_win_against_best_of_k_matches_enumeration() -> None:
    """Exact counting against brute force over every k-subset of the other sessions."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(3, 7))
        x = rng.integers(0, 3, n).astype(float)  # ties on purpose
        y = rng.integers(0, 3, n).astype(float)
        y[rng.random(n) < 0.2] = -np.inf  # sessions without a judged checkpoint yet
        for k in range(1, n):
            got = win_against_best_of_k(x, y, k)
            for s in range(n):
                others = [y[u] for u in range(n) if u != s]
                scores = [
                    1.0 if x[s] > max(c) else 0.5 if x[s] == max(c) else 0.0
                    for c in itertools.combinations(others, k)
                ]
                assert got[s] == pytest.approx(np.mean(scores))


def test_the_gap_is_the_elo_of_the_win_rate() -> None:
    """Identical sessions tie everywhere: gap 0 with a zero-width interval; an agent that
    always passes where one try passes half the time wins 3/4 against one try."""
    same = [np.ones(4)] * 6
    gap = paired_gap(same, same, 2, 0.95)
    assert gap is not None and gap.gap == 0.0 and gap.low == gap.high == 0.0
    half = [np.array([1.0, 1.0, 1.0, 1.0]) for _ in range(6)]
    tries = [np.array([1.0, 0.0, 1.0, 0.0]) for _ in range(6)]
    won = paired_gap(half, tries, 1, 0.95)
    # against another session's try: half the time it failed (a win), else a tie
    assert won is not None and won.win == pytest.approx(0.75)
    assert won.gap == pytest.approx(400 * math.log10(won.win / (1 - won.win)))
    assert paired_gap(half[:4], tries[:4], 1, 0.95) is None  # fewer than 5 tasks


def test_slope_intervals_cover_with_few_tasks() -> None:
    """Continuous scores: k tries are worth exactly 400·log10 k, so each stretch's true slope
    is known. The t quantile at T - 1 degrees of freedom covered 0.92 at 8 tasks; at the
    stretch's effective number of tasks it covers at least the nominal 0.95."""
    hits: list[bool] = []
    for rep in range(30):
        arm = checkpoint_curves(agent_rows(rep, tasks=8, sessions=4, kind="continuous"),
                                seed=rep, prices={}).arms[0]  # fmt: skip
        k = np.floor(arm.budgets / 1000.0 + 1e-9)
        truth = np.diff(400.0 * np.log10(k)) / np.diff(np.log10(arm.budgets))
        moving = truth != 0  # flat stretches are covered trivially
        hits += list(((arm.slope_low <= truth) & (truth <= arm.slope_high))[moving])
    assert np.mean(hits) >= 0.95, np.mean(hits)
