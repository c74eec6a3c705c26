"""Load task sets (built-in, JSONL, CSV, Parquet or a ``datasets`` split) and find the built-in task behind a prompt.

Built-in sets are JSONL files shipped in ``eloledger/data/tasks`` and read with the same
parser as user files, so the format is exercised by every demo run.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from eloledger.errors import UserError
from eloledger.tasks.model import Task
from eloledger.textsafe import first_control, visible
from eloledger.words import plural

BUILTIN_SETS: dict[str, tuple[str, ...]] = {
    "arith": ("arith.jsonl",),
    "code": ("code.jsonl",),
    "agent-code": ("agent-code.jsonl",),
    "agent-opt": ("agent-opt.jsonl",),  # scored optimisation tasks
    "all": ("arith.jsonl", "code.jsonl"),
}
KINDS = ("numeric", "code", "text", "agent")
_JSONL_FIX = 'one JSON object per line: {"task_id": "t1", "prompt": "...", "answer": "42"}'


def load_tasks(
    source: str,
    *,
    base_dir: Path | None = None,
    open_ended: bool = False,
    fields: dict[str, str] | None = None,
    answer_pattern: str | None = None,
) -> list[Task]:
    """``builtin:arith``, ``builtin:code``, ``builtin:all`` or a JSONL path.

    A relative path is taken from ``base_dir`` (the spec's folder) when given. ``open_ended``
    accepts tasks with only a prompt (an LLM judge compares their answers pairwise).
    """
    source = source.strip()
    if source.startswith("builtin:"):
        name = source.removeprefix("builtin:")
        if name not in BUILTIN_SETS:
            known = ", ".join(f"builtin:{n}" for n in BUILTIN_SETS)
            raise UserError(f"unknown built-in task set {source!r}", fix=f"use one of {known}")
        return list(_builtin_set(name))
    path = Path(source).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    shape = _Shape(fields or {}, re.compile(answer_pattern) if answer_pattern else None)
    return parse_jsonl(path, open_ended=open_ended, shape=shape)


# The common shapes, recognised by name (first present wins): the guides' cases (case_id),
# GSM8K (question, answer ending "#### 72"), HumanEval (prompt, test, entry_point), MBPP (text,
# test_list). ``[tasks] fields`` names others: {id = "qid", prompt = "q", answer = "a"}.
_NAMES = {
    "id": ("task_id", "id", "case_id"),
    "prompt": ("prompt", "question", "text"),
    "answer": ("answer",),
    "tests": ("tests", "test", "test_list"),
}
FIELD_KEYS = tuple(_NAMES)
_GSM8K = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


@dataclass(frozen=True)
class _Shape:
    fields: dict[str, str] = field(default_factory=dict)  # our name -> the file's column
    answer_pattern: re.Pattern[str] | None = None  # group 1 (or the match) is the answer

    def canonical(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row with task_id, prompt, answer and tests under their own names."""
        out = dict(row)
        for ours, names in _NAMES.items():
            key = "task_id" if ours == "id" else ours
            mapped = self.fields.get(ours)
            candidates = (mapped,) if mapped else names
            found = next((n for n in candidates if row.get(n) is not None), None)
            for n in names:
                if n != key and n != "text":  # "text" stays: a row may have it besides prompt
                    out.pop(n, None)
            out.pop(key, None)
            if found is not None:
                out[key] = row[found]
        tests = out.get("tests")
        if isinstance(tests, list) and all(isinstance(t, str) for t in tests):
            out["tests"] = "\n".join(tests)  # MBPP's test_list
        elif isinstance(tests, str) and "def check(" in tests and row.get("entry_point"):
            out["tests"] = f"{tests}\n\ncheck({row['entry_point']})\n"  # HumanEval
        answer = out.get("answer")
        if isinstance(answer, str):
            pattern = self.answer_pattern or (_GSM8K if "####" in answer else None)
            if pattern is not None:
                match = pattern.search(answer)
                if match is not None:
                    out["answer"] = (match.group(1) if pattern.groups else match.group(0)).strip()
        return out


def parse_jsonl(path: Path, *, open_ended: bool = False, shape: _Shape | None = None) -> list[Task]:
    """Parse a task file (JSONL, or CSV/Parquet by its suffix); every mistake is
    ``file:line: what`` (``file: row N: what`` for Parquet, which has no lines)."""
    if path.suffix.lower() == ".parquet":
        from eloledger.tasks.extras import parquet_records

        if not path.is_file():
            raise UserError(f"{path}: task file not found", fix="check the [tasks] source path")
        return parse_records(str(path), parquet_records(path), "row", open_ended, shape)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(
            f"{path}: task file not found", fix="check the [tasks] source path"
        ) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read task file ({exc.strerror})") from None
    return parse_records(str(path), _records(path, raw), "line", open_ended, shape)


def parse_records(
    label: str,
    records: Iterable[tuple[int, Any]],
    unit: str,
    open_ended: bool = False,
    shape: _Shape | None = None,
) -> list[Task]:
    """Tasks from (number, record) pairs of any source: one field mapping and one set of
    checks for JSONL, CSV, Parquet and ``datasets`` rows; ``unit`` is "line" or "row"."""
    shape = shape or _Shape()
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    stem = PurePosixPath(label.replace("\\", "/")).name.split(".")[0] or "task"
    for number, row in records:
        where = f"{label}:{number}" if unit == "line" else f"{label}: row {number}"
        made = None
        if isinstance(row, dict) and "id" not in shape.fields and _needs_id(row, shape):
            # a real GSM8K file (question, answer: no id): a stable id from file and line
            made = f"{stem}:{number}"
            row = {**row, "task_id": made}
        task = _parse_line(where, row, open_ended, shape)
        if made is not None:
            task.id_made_from = f"{label} {unit} numbers"
        if task.task_id in seen:
            raise UserError(
                f"{where}: duplicate task_id {task.task_id!r} "
                f"(first on {unit} {seen[task.task_id]})",
                fix="give every task a unique task_id",
            )
        seen[task.task_id] = number
        tasks.append(task)
    if not tasks:
        raise UserError(f"{label}: no tasks in file", fix=_JSONL_FIX)
    return tasks


def _needs_id(row: dict[str, Any], shape: _Shape) -> bool:
    """A row of a known shape (its prompt found) with no id under any name; a row whose
    prompt is not found either keeps the error that says to name the columns."""
    if any(row.get(name) is not None for name in _NAMES["id"]):
        return False
    prompts = (shape.fields["prompt"],) if "prompt" in shape.fields else _NAMES["prompt"]
    return any(isinstance(row.get(name), str) for name in prompts)


def made_ids_note(tasks: Iterable[Task]) -> str | None:
    """One line on tasks whose ids were made from their file's name and line, or None."""
    made = [t for t in tasks if t.id_made_from]
    if not made:
        return None
    return (
        f"{plural(len(made), 'task')} without an id column: named from "
        f"{made[0].id_made_from} ({made[0].task_id}, ...); add task_id to each row to name them"
    )


def load_dataset_tasks(
    dataset: str,
    *,
    data_files: Any = None,
    split: str | None = None,
    base_dir: Path,
    where: str,
    open_ended: bool = False,
    fields: dict[str, str] | None = None,
    answer_pattern: str | None = None,
) -> list[Task]:
    """``[tasks] dataset = "json"|"parquet"|"csv"|<local folder>`` through the Hugging Face
    ``datasets`` loader (the ``hf`` extra), with the same field mapping as every file."""
    from eloledger.tasks.extras import dataset_records

    label, records = dataset_records(dataset, data_files, split, base_dir, where)
    shape = _Shape(fields or {}, re.compile(answer_pattern) if answer_pattern else None)
    return parse_records(label, records, "row", open_ended, shape)


def _records(path: Path, raw: bytes) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSONL file, or of a CSV file's rows (header on line 1)."""
    if path.suffix.lower() == ".csv":
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise UserError(f"{path}: not valid UTF-8", fix="save the CSV as UTF-8") from None
        reader = csv.DictReader(io.StringIO(text, newline=""))
        for row in reader:
            yield reader.line_num, {k: v for k, v in row.items() if k and v not in (None, "")}
        return
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield lineno, orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise UserError(f"{path}:{lineno}: not valid JSON ({exc})", fix=_JSONL_FIX) from None


def _parse_line(where: str, row: Any, open_ended: bool, shape: _Shape) -> Task:
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a JSON object", fix=_JSONL_FIX)
    row = shape.canonical(row)
    task_id = row.get("task_id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not task_id.strip():
        raise UserError(
            f"{where}: missing or empty 'task_id' (also read as id or case_id)",
            fix=f'{_JSONL_FIX}; or name the id column in [tasks] fields = {{id = "..."}}',
        )
    prompt = row.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UserError(
            f"{where}: task {task_id!r} has no 'prompt' string (also read as question or text)",
            fix=f'{_JSONL_FIX}; or name the column in [tasks] fields = {{prompt = "..."}}',
        )
    answer = row.get("answer")
    if answer is not None:
        if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
            raise UserError(f"{where}: 'answer' must be a string or a number")
        answer = str(answer)
    tests = row.get("tests")
    if tests is not None and not isinstance(tests, str):
        raise UserError(f"{where}: 'tests' must be a string of Python asserts")
    scored = _scorer_fields(where, row)
    if answer is None and not tests and not scored and not open_ended:
        raise UserError(
            f"{where}: task {task_id!r} has neither 'answer' nor 'tests'",
            fix="add an 'answer' (for rule judges), 'tests' (Python asserts) or a 'scorer', or set "
            'kind = "auto" (per task) or kind = "llm" in the spec\'s [judge] to have a model '
            "compare open-ended answers",
        )
    difficulty = row.get("difficulty", 0.5)
    if (
        isinstance(difficulty, bool)
        or not isinstance(difficulty, (int, float))
        or not 0.0 <= difficulty <= 1.0
    ):
        raise UserError(f"{where}: 'difficulty' must be a number from 0 to 1")
    kind = row.get("kind") or _infer_kind(answer, tests)
    if kind not in KINDS:
        raise UserError(f"{where}: unknown kind {kind!r}", fix=f"use one of {', '.join(KINDS)}")
    entry_point = row.get("entry_point")
    if entry_point is not None and not isinstance(entry_point, str):
        raise UserError(f"{where}: 'entry_point' must be a function name")
    buggy = row.get("buggy") or ()
    files = _file_tree(where, row, "files")
    if kind == "agent" and not files and answer is None:
        raise UserError(
            f"{where}: agent task {task_id!r} has neither 'files' nor 'answer'",
            fix='add "files": {"path.py": "..."} (with "tests") or an "answer"',
        )
    split = row.get("split")
    if split is not None and split not in ("train", "val", "test"):
        raise UserError(f'{where}: \'split\' must be "train", "val" or "test", got {split!r}')
    tags = row.get("tags") or ()
    if isinstance(tags, str):
        tags = (tags,)
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise UserError(f"{where}: 'tags' must be a string or a list of strings")
    return Task(
        split=split,
        tags=tuple(tags),
        task_id=task_id.strip(),
        prompt=prompt,
        answer=answer,
        tests=tests,
        difficulty=float(difficulty),
        kind=kind,
        entry_point=entry_point,
        solution=row.get("solution"),
        buggy=tuple(buggy),
        files=files,
        solution_files=_solution_tree(where, row, files),
        **scored,
    )


def _scorer_fields(where: str, row: dict) -> dict[str, Any]:
    """A scored task's ``scorer`` (Python defining ``score``) or ``scorer_cmd`` (a command
    printing one number) and ``direction``: checked here, run only in the sandbox."""
    out: dict[str, Any] = {}
    scorer, cmd = row.get("scorer"), row.get("scorer_cmd")
    if scorer is not None:
        if not isinstance(scorer, str) or "def score" not in scorer:
            raise UserError(
                f"{where}: 'scorer' must be Python code defining score(workdir_or_answer)",
                fix="define score(x) -> float: x is the work folder (agent tasks) or the answer",
            )
        out["scorer"] = scorer
    if cmd is not None:
        if isinstance(cmd, str):
            cmd = [cmd]
        if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) for c in cmd):
            raise UserError(
                f"{where}: 'scorer_cmd' must be a list of strings (a command printing a number)",
                fix='"scorer_cmd": ["python3", "check.py"]',
            )
        out["scorer_cmd"] = tuple(cmd)
    if scorer is not None and cmd is not None:
        raise UserError(f"{where}: a task has 'scorer' or 'scorer_cmd', not both",
                        fix="keep one of them")  # fmt: skip
    direction = row.get("direction", "max")
    if direction not in ("max", "min"):
        raise UserError(f'{where}: \'direction\' must be "max" or "min", got {direction!r}')
    if out or "direction" in row:
        out["direction"] = direction
    return out


def _solution_tree(where: str, row: dict, files: dict[str, str] | None) -> dict[str, str] | None:
    """``solution_files`` is written over ``files``: together they must still be a tree."""
    solution = _file_tree(where, row, "solution_files")
    if files and solution:
        both = {**{_norm(k): k for k in files}, **{_norm(k): k for k in solution}}
        _refuse_collisions(where, "files' and 'solution_files", {v: "" for v in both.values()})
    return solution


def _norm(rel: str) -> str:
    return "/".join(p for p in PurePosixPath(rel).parts if p != ".")


def _file_tree(where: str, row: dict, key: str) -> dict[str, str] | None:
    """A task's small file tree: relative paths inside the working directory -> text."""
    tree = row.get(key)
    if tree is None:
        return None
    if not isinstance(tree, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tree.items()
    ):
        raise UserError(f"{where}: {key!r} must map relative paths to file text")
    for rel in tree:
        parts = Path(rel).parts
        if not rel or Path(rel).is_absolute() or ".." in parts:
            raise UserError(
                f"{where}: {key!r} path {rel!r} leaves the working directory",
                fix="use relative paths without '..'",
            )
    _refuse_collisions(where, key, tree)
    return dict(tree)


def _refuse_collisions(where: str, key: str, tree: dict[str, str]) -> None:
    """Paths that cannot all be files: ``.`` (the folder itself), a trailing ``/``, the same
    file twice (``a`` and ``./a``), or a file that another path needs as a folder (``a`` and
    ``a/b``). Refused here, at load, so no session is started for a tree that cannot exist."""
    files: dict[tuple[str, ...], str] = {}
    for rel in tree:
        shown = visible(rel)
        if any(ch in rel for ch in ("\x00", "\\")) or first_control(rel):
            raise UserError(
                f"{where}: '{key}' path {shown!r} holds a control character or a backslash",
                fix="use plain relative paths with '/' between folders",
            )
        parts = tuple(p for p in PurePosixPath(rel).parts if p != ".")
        if not parts or rel.endswith("/"):
            raise UserError(
                f"{where}: '{key}' path {shown!r} names a folder, not a file",
                fix='give each file its own path, e.g. "src/app.py"',
            )
        if parts in files:
            raise UserError(
                f"{where}: '{key}' paths {visible(files[parts])!r} and {shown!r} are the same file",
                fix="give the file once",
            )
        files[parts] = rel
    for parts, rel in files.items():
        for depth in range(1, len(parts)):
            if parts[:depth] in files:
                raise UserError(
                    f"{where}: '{key}' path {visible(files[parts[:depth]])!r} is a file, but "
                    f"{visible(rel)!r} needs it to be a folder",
                    fix="rename one of them",
                )


def _infer_kind(answer: str | None, tests: str | None) -> str:
    if tests:
        return "code"
    try:
        return "numeric" if math.isfinite(float(answer.replace(",", ""))) else "text"
    except (AttributeError, ValueError):
        return "text"


@functools.cache
def _builtin_set(name: str) -> tuple[Task, ...]:
    folder = resources.files("eloledger") / "data" / "tasks"
    tasks: list[Task] = []
    for filename in BUILTIN_SETS[name]:
        with resources.as_file(folder / filename) as path:
            tasks.extend(parse_jsonl(path))
    return tuple(tasks)


@functools.cache
def _builtin_index() -> tuple[dict[str, Task], dict[str, Task]]:
    by_prompt: dict[str, Task] = {}
    by_id: dict[str, Task] = {}
    for task in (*_builtin_set("all"), *_builtin_set("agent-code"), *_builtin_set("agent-opt")):
        by_prompt[task.prompt.strip()] = task
        by_id[task.task_id] = task
    return by_prompt, by_id


def lookup_task(prompt: str) -> Task | None:
    """The built-in task whose prompt is contained in ``prompt`` (None if there is none).

    Runners wrap prompts in instructions, so an exact match is tried first and then a
    containment scan (about 60 short strings: cheap).
    """
    by_prompt, _ = _builtin_index()
    text = prompt.strip()
    found = by_prompt.get(text)
    if found is not None:
        return found
    for task_prompt, task in by_prompt.items():
        if task_prompt in text:
            return task
    return None


def builtin_task(task_id: str) -> Task | None:
    """The built-in task with this id (None if unknown)."""
    return _builtin_index()[1].get(task_id.strip())
