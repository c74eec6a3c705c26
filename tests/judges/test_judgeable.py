"""One rule for which rows are judged, shared by the run's comparisons and the budget curves.

Found when the agent demo's Elo table compared an arm whose sessions ran out of turns (judged on
the files they left) while `eloledger curve` dropped the same arm as "never got a score".
"""

from __future__ import annotations

import pytest

from eloledger.budget.sessions import row_score
from eloledger.ledger.schema import judgeable

AGENT = {"agent": "claude-code", "status": "error", "score": 0.2, "passed": False}


@pytest.mark.parametrize("error_class", ["max_turns", "timeout"])
def test_an_agent_session_cut_by_its_limit_is_judged(error_class: str) -> None:
    row = {**AGENT, "error_class": error_class}
    assert judgeable(row) and row_score(row) == 0.2


@pytest.mark.parametrize("error_class", ["auth", "api", "crash", "budget"])
def test_an_infrastructure_failure_is_not_judged(error_class: str) -> None:
    row = {**AGENT, "error_class": error_class}
    assert not judgeable(row) and row_score(row) is None


def test_a_failed_chat_call_is_never_judged_even_with_a_score() -> None:
    row = {"status": "error", "error_class": "max_turns", "score": 1.0}
    assert not judgeable(row) and row_score(row) is None
    assert judgeable({"status": "ok"}) and row_score({"status": "ok", "passed": True}) == 1.0
