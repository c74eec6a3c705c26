"""The built-in agent task set: each task's files fail its tests and its solution passes them.

The simulator's agent writes ``solution_files`` and the runner judges the working directory
with ``tests``, so both halves are checked here on real files with a real interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.tasks.registry import load_tasks, parse_jsonl

AGENT_TASKS = load_tasks("builtin:agent-code")


def _write(folder: Path, tree: dict[str, str]) -> None:
    for rel, text in tree.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _tests_pass(folder: Path, tests: str) -> bool:
    (folder / "_judge.py").write_text(tests, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-E", "-s", "_judge.py"], cwd=folder, capture_output=True, timeout=30
    )
    return done.returncode == 0


@pytest.mark.parametrize("task", AGENT_TASKS, ids=lambda t: t.task_id)
def test_files_fail_and_solution_passes(task, tmp_path: Path) -> None:
    assert task.kind == "agent" and task.files and task.tests and task.solution_files
    before, after = tmp_path / "before", tmp_path / "after"
    _write(before, task.files)
    _write(after, {**task.files, **task.solution_files})
    assert not _tests_pass(before, task.tests)
    assert _tests_pass(after, task.tests)


@pytest.mark.parametrize("bad", ["../escape.py", "/etc/passwd", ""])
def test_a_file_outside_the_working_directory_is_refused(bad: str, tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        '{"task_id": "t", "kind": "agent", "prompt": "p", "tests": "assert True",'
        f' "files": {{"{bad}": "x"}}}}\n',
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=r"tasks.jsonl:1: 'files' path"):
        parse_jsonl(path)


def test_an_agent_task_needs_files_or_an_answer(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"task_id": "t", "kind": "agent", "prompt": "p", "tests": "assert 1"}\n')
    with pytest.raises(UserError, match="neither 'files' nor 'answer'"):
        parse_jsonl(path)
