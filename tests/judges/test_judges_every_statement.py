"""The tests judge runs every top-level statement of a task's tests; any that raises fails it.

A failing line that is not an ``assert`` (a ``try/except/else: raise``, a ``for`` loop of
asserts, a bare call, a ``with`` block) used to be ignored once the asserts before it held.
"""

from __future__ import annotations

import pytest

from eloledger.judges.code import judge_tests
from eloledger.tasks.registry import builtin_task
from sandbox_support import need_sandbox

# code-016's reference solution with the cycle check dropped: right order, no ValueError
NO_CYCLE_CHECK = """
import heapq
def topo_sort(graph):
    nodes = set(graph)
    for targets in graph.values():
        nodes.update(targets)
    indegree = {node: 0 for node in nodes}
    for targets in graph.values():
        for target in targets:
            indegree[target] += 1
    ready = [node for node, deg in indegree.items() if deg == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for target in graph.get(node, []):
            indegree[target] -= 1
            if indegree[target] == 0:
                heapq.heappush(ready, target)
    return order
"""


def _code(text: str) -> str:
    return f"```python\n{text}\n```"


@pytest.fixture(params=["bwrap", "none"])
def kind(request: pytest.FixtureRequest) -> str:
    return need_sandbox() if request.param == "bwrap" else "none"


def test_a_topo_sort_that_never_detects_cycles_fails_the_builtin_task(kind: str) -> None:
    task = builtin_task("code-016")
    assert task is not None and task.tests and task.solution
    wrong = judge_tests(_code(NO_CYCLE_CHECK), task.tests, sandbox_kind=kind)
    assert not wrong.passed and wrong.score == pytest.approx(3 / 4)
    assert "cycle not detected" in (wrong.detail or "")
    right = judge_tests(_code(task.solution), task.tests, sandbox_kind=kind)
    assert right.passed and right.score == 1.0


def test_a_trailing_for_loop_of_asserts_counts(kind: str) -> None:
    tests = "assert div(4, 2) == 2\nfor a, b in [(9, 3), (8, 2)]:\n    assert div(a, b) == a // b\n"
    wrong = judge_tests(_code("div = lambda a, b: 2"), tests, sandbox_kind=kind)
    assert not wrong.passed and wrong.score == pytest.approx(1 / 2)
    assert judge_tests(_code("div = lambda a, b: a // b"), tests, sandbox_kind=kind).passed


def test_every_kind_of_statement_fails_the_task_and_later_ones_still_run(kind: str) -> None:
    tests = """
import contextlib
check(1)
with contextlib.suppress(KeyError):
    check(2)
if True:
    check(3)
while False:
    pass
assert check(0) is None
"""
    honest = judge_tests(_code("def check(n):\n    return None\n"), tests, sandbox_kind=kind)
    assert honest.passed and honest.score == 1.0
    # each call but check(0) raises: three failed statements, the last assert still runs
    wrong = judge_tests(_code("def check(n):\n    if n:\n        raise ValueError(n)\n"), tests,
                        sandbox_kind=kind)  # fmt: skip
    assert not wrong.passed and wrong.score == pytest.approx(2 / 5)
    assert (wrong.detail or "").startswith("line 3: ValueError")


def test_a_setup_statement_that_raises_fails_the_task(kind: str) -> None:
    tests = "value = make()\nassert True\n"
    broken = judge_tests(_code("def make():\n    raise KeyError('x')\n"), tests, sandbox_kind=kind)
    assert not broken.passed and broken.score == pytest.approx(1 / 2)
    assert judge_tests(_code("def make():\n    return 1\n"), tests, sandbox_kind=kind).passed
