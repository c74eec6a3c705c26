"""Tests judge for agent sessions: the task's asserts against a copy of the agent's folder.

There is no reply to extract code from: the agent's result is the file tree it left behind.
That tree is copied when the session ends (:func:`safe_copy`: regular files and folders only,
through directory descriptors, no symlink followed or kept, bytes, files, folders and depth
capped), and the copy is judged
by :func:`eloledger.judges.code.judge_folder` in ``dir`` mode: the candidate process imports
the agent's modules from the copy, the tests process (which never sees the copy) evaluates
the asserts and reaches those modules only through the plain-data proxy. So the agent's own
``test_*.py``, ``conftest.py``, ``sitecustomize.py`` or a file named like the judge's cannot
change how the task's tests run, and a process the agent left running cannot edit the files
being judged.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from eloledger import sandbox
from eloledger.judges.code import TestsVerdict, judge_folder
from eloledger.safetree import Caps, CopyReport, copy_tree

# caches and installs an agent may leave (never judged: the candidate runs with -I -S), so a
# virtual environment does not trip the copy's caps
SKIP = frozenset(
    {"__pycache__", ".git", "node_modules", ".venv", ".tox", ".mypy_cache", ".pytest_cache",
     ".ruff_cache"}
)  # fmt: skip
CAPS = Caps()
MAX_FILES = CAPS.files
MAX_BYTES = CAPS.bytes  # within the candidate sandbox's tmpfs (judges.code)


def safe_copy(
    src: Path, dst: Path, *, skip: frozenset[str] = SKIP, readable: bool = False
) -> CopyReport:
    """Copy ``src`` to ``dst`` through directory descriptors (:func:`eloledger.safetree.
    copy_tree`): regular files and folders only, no symlink followed or kept, devices, FIFOs
    and sockets never opened, within :data:`CAPS` (``report.tripped`` names the one crossed).
    Private modes (0600/0700) unless ``readable`` (a throwaway copy a sandbox reads)."""
    return copy_tree(Path(src), Path(dst), skip=skip, caps=CAPS, readable=readable)


def judge_workdir(
    workdir: Path,
    tests: str,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
    sandbox_kind: str = "auto",
) -> TestsVerdict:
    """Run ``tests`` against a copy of the files in ``workdir``; score = fraction passed."""
    kind = sandbox.resolve(sandbox_kind)
    with tempfile.TemporaryDirectory(prefix="eloledger-judge-") as folder:
        work = Path(folder, "work")
        safe_copy(Path(workdir), work, readable=True)
        return judge_folder(work, "dir", tests, timeout_s, memory_mb, kind)

