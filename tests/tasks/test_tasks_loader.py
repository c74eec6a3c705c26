"""Built-in task sets and the JSONL loader: real files, real errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.tasks import Task, builtin_task, load_tasks, lookup_task


def test_builtin_sets_sizes_and_spread() -> None:
    arith = load_tasks("builtin:arith")
    code = load_tasks("builtin:code")
    assert len(arith) >= 40
    assert len(code) >= 12
    assert len(load_tasks("builtin:all")) == len(arith) + len(code)
    assert all(t.kind == "numeric" and t.answer is not None for t in arith)
    assert all(t.kind == "code" and t.tests and t.entry_point and t.buggy for t in code)
    for tasks in (arith, code):
        levels = [t.difficulty for t in tasks]
        assert min(levels) < 0.15 and max(levels) > 0.85
        assert len({round(d, 1) for d in levels}) >= 6  # a spread, not two clusters
    ids = [t.task_id for t in arith + code]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("task", load_tasks("builtin:code"), ids=lambda t: t.task_id)
def test_code_task_solution_passes_and_every_buggy_variant_fails(task: Task) -> None:
    namespace: dict = {}
    exec(compile(task.solution + "\n" + task.tests, task.task_id, "exec"), namespace)
    assert callable(namespace[task.entry_point])
    for variant in task.buggy:
        with pytest.raises(AssertionError):
            exec(compile(variant + "\n" + task.tests, task.task_id, "exec"), {})


def test_numeric_answers_parse_as_numbers() -> None:
    for task in load_tasks("builtin:arith"):
        assert float(task.answer) == float(task.answer)  # no NaN, parses


def test_lookup_finds_task_inside_a_wrapped_prompt() -> None:
    task = load_tasks("builtin:arith")[5]
    wrapped = f"Solve the problem.\n\n{task.prompt}\n\nEnd with a line 'Answer: <number>'."
    assert lookup_task(wrapped) == task
    assert lookup_task(task.prompt) == task
    assert lookup_task("What is the capital of France?") is None
    assert builtin_task(task.task_id) == task
    assert builtin_task("nope") is None


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_loader_reads_answers_tests_and_relative_paths(tmp_path: Path) -> None:
    rows = [
        {"task_id": "t1", "prompt": "2+2?", "answer": 4},
        {"task_id": "t2", "prompt": "Capital of France?", "answer": "Paris"},
        {"task_id": "t3", "prompt": "write f", "tests": "assert f() == 1", "entry_point": "f"},
    ]
    _write(tmp_path / "tasks.jsonl", [json.dumps(r) for r in rows[:2]] + ["", json.dumps(rows[2])])
    tasks = load_tasks("tasks.jsonl", base_dir=tmp_path)
    assert [t.task_id for t in tasks] == ["t1", "t2", "t3"]
    assert tasks[0].answer == "4" and tasks[0].kind == "numeric"
    assert tasks[1].kind == "text"
    assert tasks[2].kind == "code" and tasks[2].entry_point == "f"
    assert tasks[0].difficulty == 0.5


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (['{"task_id": "a", "prompt": "p", "answer": "1"}', "{not json"], ":2: not valid JSON"),
        (['{"task_id": " ", "prompt": "p", "answer": "1"}'], ":1: missing or empty 'task_id'"),
        (['{"task_id": "a", "answer": "1"}'], ":1: task 'a' has no 'prompt'"),
        (['{"task_id": "a", "prompt": "p"}'], ":1: task 'a' has neither 'answer' nor 'tests'"),
        (
            [
                '{"task_id": "a", "prompt": "p", "answer": "1"}',
                "",
                '{"task_id": "a", "prompt": "q", "answer": "2"}',
            ],
            ":3: duplicate task_id 'a' (first on line 1)",
        ),
        (['{"task_id": "a", "prompt": "p", "answer": "1", "difficulty": 3}'], ":1: 'difficulty'"),
        (['["a", "b"]'], ":1: expected a JSON object"),
        (['{"task_id": "a", "prompt": "p", "answer": "1", "kind": "essay"}'], ":1: unknown kind"),
    ],
)
def test_jsonl_errors_name_file_and_line(tmp_path: Path, lines: list[str], expected: str) -> None:
    path = _write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(UserError) as info:
        load_tasks(str(path))
    assert f"{path}{expected}" in info.value.one_line()
    assert info.value.exit_status == 2


def test_missing_empty_and_unknown_builtin(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="task file not found"):
        load_tasks(str(tmp_path / "absent.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(UserError, match="no tasks in file"):
        load_tasks(str(tmp_path / "empty.jsonl"))
    with pytest.raises(UserError, match="builtin:arith"):
        load_tasks("builtin:poems")
