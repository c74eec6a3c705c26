"""Task sets: the built-in verifiable tasks shipped with eloledger and user JSONL files."""

from __future__ import annotations

from eloledger.tasks.model import Task
from eloledger.tasks.registry import builtin_task, load_tasks, lookup_task

__all__ = ["Task", "builtin_task", "load_tasks", "lookup_task"]
