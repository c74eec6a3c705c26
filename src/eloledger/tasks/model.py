"""The task record shared by the loader, the runner, the judges and the simulator."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Task:
    """One prompt with what is needed to check an answer to it.

    ``answer`` is set for numeric/text tasks, ``tests`` (Python asserts calling
    ``entry_point``) for code tasks. ``solution``/``buggy`` are only filled for built-in code
    tasks: the simulator returns one of them as a correct or a buggy reply.
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
