"""Budget curves: the best-of-k reference law, slowing arms, splitting, and the win matrix."""

from __future__ import annotations

import numpy as np
import pytest

from eloledger.budget.curves import REFERENCE_ELO_PER_DECADE, budget_curves
from eloledger.budget.sampling_sim import sampling_sessions
from eloledger.budget.sessions import build_sessions
from eloledger.budget.wins import WinMatrixBuilder
from eloledger.errors import UserError


def _samples_at(tokens: np.ndarray, per_sample: int = 1000, cap: int = 16) -> np.ndarray:
    return np.minimum(np.floor(tokens / per_sample + 1e-9), cap)


def test_independent_samples_rise_400_elo_per_tenfold_tokens() -> None:
    # Constant tokens per sample: at budget B a session has floor(B/1000) i.i.d. samples, and
    # best-of-k of i.i.d. continuous scores is worth exactly 400·log10(k) Elo over best-of-1.
    rows = sampling_sessions(arms=("iid",), tasks=30, sessions=6, samples=16, seed=0)
    curve = budget_curves(rows, bootstrap=100, seed=0).arm("iid")
    k = _samples_at(curve.tokens)
    expected = curve.elo[0] + 400.0 * np.log10(k / k[0])
    inside = (expected >= curve.ci_low - 1e-6) & (expected <= curve.ci_high + 1e-6)
    assert inside.all(), (curve.elo - expected, curve.ci_low, curve.ci_high)
    assert curve.tokens[-1] / curve.tokens[0] >= 10  # the curve spans more than a decade
    per_decade = (curve.elo[-1] - curve.elo[0]) / np.log10(k[-1] / k[0])
    assert 350 < per_decade < 450
    assert curve.b_inf is None  # still scaling: never clearly below the reference


def test_reference_law_holds_across_seeds_and_token_jitter() -> None:
    # The end-to-end gain per decade of samples stays near 400 for other seeds and noisy
    # token counts (no seed was picked to make the first test pass).
    gains = []
    for seed in (1, 2, 3):
        rows = sampling_sessions(
            arms=("iid",), tasks=30, sessions=6, samples=16, jitter=0.1, seed=seed
        )
        curve = budget_curves(rows, bootstrap=0, seed=seed).arm("iid")
        gains.append((curve.elo[-1] - curve.elo[0]) / np.log10(16.0))
    assert 340 < np.mean(gains) < 460, gains


def test_an_arm_that_stops_improving_falls_below_the_reference() -> None:
    rows = sampling_sessions(
        arms=("iid", "stall"), tasks=30, sessions=6, samples=16, stall_after={"stall": 2}, seed=4
    )
    result = budget_curves(rows, bootstrap=100, seed=4)
    stall = result.arm("stall")
    assert stall.b_inf is not None
    assert stall.b_inf <= 3100  # it stops by its 2nd-3rd sample (grid 1000, 1500, 2250, ...)
    after = stall.tokens[:-1] >= stall.b_inf
    assert np.all(stall.slope_per_decade[after] < REFERENCE_ELO_PER_DECADE)
    assert np.all(stall.slope_ci_high[stall.tokens[:-1] >= 2250] < REFERENCE_ELO_PER_DECADE)
    # Beyond its second sample the stalled arm gains nothing, and ends far below the iid arm.
    assert stall.elo[-1] == pytest.approx(stall.elo[stall.tokens >= 2250][0], abs=1e-6)
    assert result.arm("iid").elo[-1] - stall.elo[-1] > 250
    assert result.arm("iid").b_inf is None


def test_budget_splitting_helps_only_the_arm_that_stalls() -> None:
    rows = sampling_sessions(
        arms=("iid", "stall"), tasks=30, sessions=6, samples=16, stall_after={"stall": 2}, seed=5
    )
    result = budget_curves(rows, bootstrap=100, seed=5, splits=(2,))
    split = {s.arm: s for s in result.splitting}
    iid, stall = split["iid"], split["stall"]
    # iid: two sessions of B/2 hold as many samples as one of B, so no difference expected
    # (up to the floor of B/2 per session).
    k_single = _samples_at(np.array([iid.budget]))[0]
    k_split = 2 * _samples_at(np.array([iid.budget / 2]))[0]
    expected = 400 * np.log10(k_split / k_single)
    assert iid.delta_ci_low <= expected <= iid.delta_ci_high
    # stall: two sessions give two fresh pairs of samples, one session only its first two.
    assert stall.delta_ci_low > 50
    assert stall.split_elo == pytest.approx(stall.single_elo + stall.delta)
    player = result.arm("stall")
    assert stall.single_elo == pytest.approx(player.elo[player.tokens == stall.budget][0])


def test_bootstrap_is_reproducible_and_the_anchor_is_the_cheapest_arms_first_point() -> None:
    rows = sampling_sessions(arms=("cheap", "dear"), tasks=8, sessions=3, samples=4, seed=6)
    for row in rows:
        if row["arm"] == "dear":
            row["total_tokens"] *= 3
    one = budget_curves(rows, bootstrap=30, seed=11).to_dict()
    two = budget_curves(rows, bootstrap=30, seed=11).to_dict()
    assert one == two
    assert one["anchor"].startswith("cheap@")
    cheap = one["arms"][0]
    assert cheap["name"] == "cheap" and cheap["points"][0]["elo"] == 1000.0
    other = budget_curves(rows, bootstrap=30, seed=12).to_dict()
    assert other["arms"][1]["points"][-1]["ci_low"] != one["arms"][1]["points"][-1]["ci_low"]


def test_without_session_field_the_bootstrap_resamples_tasks() -> None:
    rows = sampling_sessions(arms=("a", "b"), tasks=10, sessions=1, samples=6, seed=7)
    for row in rows:
        del row["session"]
    result = budget_curves(rows, bootstrap=20, seed=0, resample="sessions")  # tasks: the default
    assert result.resample == "tasks"
    assert any("resampling tasks" in w for w in result.warnings)
    assert all(np.all(np.isfinite(a.ci_high)) for a in result.arms)


@pytest.mark.parametrize("mode", ["tasks", "both"])
def test_other_resampling_modes_give_intervals(mode: str) -> None:
    rows = sampling_sessions(arms=("a",), tasks=10, sessions=3, samples=6, seed=8)
    curve = budget_curves(rows, bootstrap=20, seed=0, resample=mode).arm("a")
    assert curve.ci_low[-1] < curve.elo[-1] < curve.ci_high[-1]
    assert curve.ci_high[-1] - curve.ci_low[-1] > 20


def test_sessions_count_error_tokens_and_impute_missing_usage() -> None:
    rows = [
        {
            "task_id": "t",
            "arm": "a",
            "session": "s",
            "sample": 0,
            "status": "error",
            "total_tokens": 300,
            "usage_source": "server",
        },
        {
            "task_id": "t",
            "arm": "a",
            "session": "s",
            "sample": 1,
            "status": "ok",
            "total_tokens": 1000,
            "score": 0.2,
            "usage_source": "server",
        },
        {
            "task_id": "t",
            "arm": "a",
            "session": "s",
            "sample": 2,
            "status": "ok",
            "usage_source": "missing",
            "score": 0.9,
        },
        {
            "task_id": "t",
            "arm": "a",
            "session": "s",
            "sample": 3,
            "status": "ok",
            "total_tokens": 2000,
            "score": 0.1,
            "usage_source": "server",
        },
        {"task_id": "t", "arm": "a", "session": "s", "role": "judge", "total_tokens": 99999},
    ]
    sessions = build_sessions(rows)
    (session,) = sessions.sessions
    # error call: 300 tokens spent, no score; the missing usage counts at the median (1500).
    assert session.cum_tokens.tolist() == [300, 1300, 2800, 4800]
    assert session.best_at(np.array([299, 1300, 2799, 2800, 10**6])).tolist() == [
        -np.inf,
        0.2,
        0.2,
        0.9,
        0.9,
    ]
    assert any("without token usage" in w and "1500" in w for w in sessions.warnings)


def test_rows_are_ordered_by_sample_not_by_ledger_order() -> None:
    rows = [
        {"task_id": "t", "arm": "a", "session": "s", "sample": 1, "total_tokens": 10, "score": 5.0},
        {"task_id": "t", "arm": "a", "session": "s", "sample": 0, "total_tokens": 90, "score": 1.0},
    ]
    (session,) = build_sessions(rows).sessions
    assert session.cum_tokens.tolist() == [90, 100]
    assert session.best.tolist() == [1.0, 5.0]


def test_bad_input_is_a_user_error() -> None:
    rows = sampling_sessions(arms=("a",), tasks=2, sessions=2, samples=2)
    with pytest.raises(UserError, match="grid"):
        budget_curves(rows, grid=1.0)
    with pytest.raises(UserError, match="resample"):
        budget_curves(rows, resample="rows")
    unscored = [{k: v for k, v in r.items() if k != "score"} for r in rows]
    with pytest.raises(UserError, match="no call has a score"):
        budget_curves(unscored, bootstrap=0)
    with pytest.raises(UserError, match="no sample/select rows"):
        budget_curves([{"task_id": "t", "arm": "a", "role": "judge"}])


def _brute_force_wins(sessions, n_players, session_weight=None, task_weight=None):
    wins = np.zeros((n_players, n_players))
    for a, (task_a, players_a, scores_a) in enumerate(sessions):
        for b, (task_b, players_b, scores_b) in enumerate(sessions):
            if task_a != task_b or a == b:
                continue
            weight = 1.0
            if session_weight is not None:
                weight *= session_weight[a] * session_weight[b]
            if task_weight is not None:
                weight *= task_weight[task_a]
            for p, x in zip(players_a, scores_a, strict=True):
                for q, y in zip(players_b, scores_b, strict=True):
                    wins[p, q] += weight * ((x > y) + 0.5 * (x == y))
    np.fill_diagonal(wins, 0.0)
    return wins


def test_win_matrix_equals_the_pairwise_definition() -> None:
    rng = np.random.default_rng(3)
    arm_players = [np.array([0, 1, 2]), np.array([3, 4])]
    sessions = []
    for task in range(4):
        for arm in (0, 1):
            for _ in range(int(rng.integers(1, 4))):
                scores = np.sort(rng.integers(-1, 3, size=len(arm_players[arm])).astype(float))
                scores[scores < 0] = -np.inf  # unscored yet: ties with unscored, loses to scores
                sessions.append((task, arm_players[arm], scores))
    sizes = [len(s[1]) for s in sessions]
    entry_session = np.repeat(np.arange(len(sessions)), sizes)
    session_task = np.array([s[0] for s in sessions])
    builder = WinMatrixBuilder(
        task=session_task[entry_session],
        session=entry_session,
        player=np.concatenate([s[1] for s in sessions]),
        score=np.concatenate([s[2] for s in sessions]),
        n_players=5,
        session_task=session_task,
        session_players=[s[1] for s in sessions],
        session_scores=[s[2] for s in sessions],
    )
    np.testing.assert_allclose(builder.build(), _brute_force_wins(sessions, 5))
    sw = rng.integers(0, 3, len(sessions)).astype(float)
    tw = rng.integers(0, 3, 4).astype(float)
    np.testing.assert_allclose(builder.build(sw, tw), _brute_force_wins(sessions, 5, sw, tw))
    np.testing.assert_allclose(builder.build(sw), _brute_force_wins(sessions, 5, sw))
