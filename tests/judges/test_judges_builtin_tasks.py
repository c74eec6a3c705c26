"""Every built-in code task's own reference solution passes its tests through the sandboxed
judge (score 1.0), and every buggy variant the simulator samples fails them: no idiom of the
built-in tests is lost to the judge's rules on statements and plain data."""

from __future__ import annotations

import pytest

from eloledger.judges.code import judge_tests
from eloledger.tasks.registry import load_tasks
from sandbox_support import need_sandbox

CODE_TASKS = load_tasks("builtin:code")


def _code(text: str) -> str:
    return f"```python\n{text}\n```"


@pytest.mark.parametrize("task", CODE_TASKS, ids=lambda t: t.task_id)
def test_reference_solution_passes_and_buggy_variants_fail(task) -> None:  # noqa: ANN001
    kind = need_sandbox()
    assert task.kind == "code" and task.tests and task.solution and task.buggy
    right = judge_tests(_code(task.solution), task.tests, sandbox_kind=kind)
    assert (right.score, right.passed) == (1.0, True), right.detail
    for variant in task.buggy:
        wrong = judge_tests(_code(variant), task.tests, sandbox_kind=kind)
        assert not wrong.passed and wrong.score < 1, variant
