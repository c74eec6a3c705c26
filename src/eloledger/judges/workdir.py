"""Tests judge for agent sessions: run a task's asserts in the directory the agent edited.

There is no reply to extract code from: the agent's result is the file tree it left behind.
So the tests judge of :mod:`eloledger.judges.code` is given, as its "candidate", two lines that
move into that directory and put it first on ``sys.path``; the task's asserts then import the
agent's modules from there. Everything else is that judge's: the separate, isolated child
(``python -I``), its CPU, memory, file-size and process limits set before the candidate runs,
the process-group kill at the wall-clock timeout, one test per top-level ``assert``. The
tests themselves are written to the judge's own temporary folder, out of the agent's reach.
"""

from __future__ import annotations

from pathlib import Path

from eloledger.judges.code import judge_tests
from eloledger.judges.rule import Verdict


def judge_workdir(
    workdir: Path, tests: str, *, timeout_s: float = 5.0, memory_mb: int = 512
) -> Verdict:
    """Run ``tests`` against the files in ``workdir``; score = fraction of asserts passed."""
    folder = str(Path(workdir).resolve())
    enter = f"import os, sys\nos.chdir({folder!r})\nsys.path.insert(0, {folder!r})\n"
    return judge_tests(f"```python\n{enter}```", tests, timeout_s=timeout_s, memory_mb=memory_mb)
