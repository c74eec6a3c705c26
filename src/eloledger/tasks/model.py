"""The task record shared by the loader, the runner, the judges and the simulator."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Task:
    """One prompt with what is needed to check an answer to it.

    ``answer`` is set for numeric/text tasks, ``tests`` (Python asserts calling
    ``entry_point``) for code tasks. ``solution``/``buggy`` are only filled for built-in code
    tasks: the simulator returns one of them as a correct or a buggy reply.

    Agent tasks (``kind = "agent"``) carry ``files``, a small tree (relative path -> text)
    written into each session's fresh working directory; their ``tests`` are Python asserts run
    in that directory after the agent finishes (the agent edits files, the tests judge the
    result), or an ``answer`` judges the final message. ``solution_files`` (built-in tasks
    only) are the fixed files the simulator's agent writes.
    """

    task_id: str
    prompt: str
    answer: str | None = None
    tests: str | None = None
    difficulty: float = 0.5
    kind: str = "numeric"
    entry_point: str | None = None
    solution: str | None = field(default=None, repr=False, compare=False)
    buggy: tuple[str, ...] = field(default=(), repr=False, compare=False)
    files: dict[str, str] | None = None
    solution_files: dict[str, str] | None = field(default=None, repr=False, compare=False)
    split: str | None = None  # train | val | test: written on every ledger row
    tags: tuple[str, ...] = ()  # problem type, source, "regression set": written on every row
    # scored tasks: Python defining score(workdir_or_answer) -> float, or a command
    # printing one number; ranked by score within the task, "max" or "min" is better
    scorer: str | None = field(default=None, repr=False, compare=False)
    scorer_cmd: tuple[str, ...] = ()
    direction: str = "max"
    # set when the file has no id column: the id was made from its name and line
    # ("gsm8k-test:17"), so the run says once how its tasks are named
    id_made_from: str | None = field(default=None, repr=False, compare=False)
