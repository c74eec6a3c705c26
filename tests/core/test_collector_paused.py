"""The cyclic collector is off while rows are built, and on again after, whatever happens."""

from __future__ import annotations

import gc

import pytest

from eloledger.budget.outcomes import arm_outcomes
from eloledger.gcpause import collector_paused


@pytest.fixture(autouse=True)
def _collector_on_after() -> None:
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_on_after_even_after_an_error() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), collector_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_a_pause_inside_a_pause_leaves_it_off_until_the_outer_one_ends() -> None:
    gc.enable()
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()  # the inner pause did not turn it on under the outer one
    assert gc.isenabled()


def test_a_pause_keeps_it_off_when_it_was_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_arm_outcomes_leaves_the_collector_as_it_found_it() -> None:
    gc.enable()
    rows = [
        {"task_id": "t1", "arm": "a", "total_tokens": 10, "passed": True},
        {"task_id": "t1", "arm": "b", "total_tokens": 30, "passed": False},
    ]
    outcomes, _ = arm_outcomes(rows)
    assert gc.isenabled()
    assert (outcomes["a"].solved, outcomes["b"].solved, outcomes["b"].total_tokens) == (1, 0, 30)
