"""The workdir tests judge: the task's asserts against the files an agent left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from eloledger.judges.workdir import judge_workdir
from eloledger.tasks import load_tasks

TASKS = load_tasks("builtin:agent-code")


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task_id)
def test_given_files_fail_and_solutions_pass(task, tmp_path: Path) -> None:
    for rel, text in (task.files or {}).items():
        (tmp_path / rel).write_text(text)
    before = judge_workdir(tmp_path, task.tests)
    assert not before.passed and before.score < 1
    for rel, text in (task.solution_files or {}).items():
        (tmp_path / rel).write_text(text)
    after = judge_workdir(tmp_path, task.tests)
    assert after.passed and after.score == 1.0


def test_a_hanging_edit_is_killed_at_the_timeout(tmp_path: Path) -> None:
    task = TASKS[0]
    for rel, text in (task.files or {}).items():
        (tmp_path / rel).write_text(text)
    (tmp_path / "stats.py").write_text("while True:\n    pass\n")
    verdict = judge_workdir(tmp_path, task.tests, timeout_s=1)
    assert not verdict.passed and "timed out" in (verdict.detail or "")


def test_the_agents_own_test_file_does_not_judge_itself(tmp_path: Path) -> None:
    task = TASKS[0]
    for rel, text in (task.files or {}).items():
        (tmp_path / rel).write_text(text)
    (tmp_path / "test_stats.py").write_text("print('ok')\n")  # the agent gutted its tests
    (tmp_path / "tests.py").write_text("")  # and planted a file named like the judge's
    assert not judge_workdir(tmp_path, task.tests).passed  # the task's own asserts decide
