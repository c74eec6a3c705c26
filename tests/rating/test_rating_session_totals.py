"""``arm_outcomes`` takes session totals without building each session's arrays.

``budget_sessions.session_totals`` must give exactly what ``build_sessions`` gives for the
totals (bit for bit) and the same warnings and errors: on the varied ledgers of
test_rating_ledger_outcomes (imputed medians, error rows without usage, rows without an arm), on
fractional token counts (summed in another order they would differ: the sessions are built
instead), and on sums past 2**53.
"""

from __future__ import annotations

import pytest
from test_rating_ledger_outcomes import varied

from eloledger.budget.sessions import build_sessions, session_totals
from eloledger.errors import UserError


def _built(rows):
    built = build_sessions(rows)
    return {(s.task, s.arm, s.key): s.total_tokens for s in built.sessions}, built.warnings


@pytest.mark.parametrize("seed", range(6))
def test_session_totals_equal_build_sessions(seed: int) -> None:
    rows = varied(seed, 3000)
    totals, warnings = session_totals(rows)
    want, want_warnings = _built(rows)
    assert list(totals.items()) == list(want.items())
    assert warnings == want_warnings
    assert any("median" in w for w in warnings)  # the imputation path is exercised


def test_fractional_tokens_sum_in_call_order() -> None:
    """0.1 + 0.2 + 0.3 differs from 0.3 + 0.2 + 0.1: the order of the sorted calls wins."""
    rows = [
        {"task_id": "t", "arm": "a", "session": "s", "sample": 2, "total_tokens": 0.1},
        {"task_id": "t", "arm": "a", "session": "s", "sample": 1, "total_tokens": 0.2},
        {"task_id": "t", "arm": "a", "session": "s", "sample": 0, "total_tokens": 0.3},
    ]
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1
    totals, _ = session_totals(rows)
    assert totals == {("t", "a", "s"): 0.3 + 0.2 + 0.1} == _built(rows)[0]


def test_huge_sums_take_the_exact_path() -> None:
    """Past 2**53 partial sums round, so ledger order (2.0) and call order (0.0) differ."""
    order = [(1, 1.0), (2, 1.0), (0, 2.0**53), (3, -(2.0**53))]  # (sample, tokens), ledger order
    rows = [{"task_id": "t", "arm": "a", "sample": k, "total_tokens": v} for k, v in order]
    assert sum(v for _, v in order) == 2.0
    assert session_totals(rows)[0] == {("t", "a", ""): 0.0} == _built(rows)[0]


@pytest.mark.parametrize(
    "rows",
    [
        [{"task_id": "t", "arm": "a", "role": "judge", "total_tokens": 5}],
        [{"task_id": "t", "total_tokens": 5}, {"arm": "a", "status": "ok"}],
    ],
)
def test_same_errors(rows) -> None:
    with pytest.raises(UserError) as built:
        build_sessions(rows)
    with pytest.raises(UserError) as totals:
        session_totals(rows)
    assert str(totals.value) == str(built.value)
