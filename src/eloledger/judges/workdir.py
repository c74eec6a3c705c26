"""Tests judge for agent sessions: the task's asserts against a copy of the agent's folder.

There is no reply to extract code from: the agent's result is the file tree it left behind.
That tree is copied when the session ends (:func:`safe_copy`: regular files and folders only,
a symlink is kept only when it points inside the tree, sizes capped), and the copy is judged
by :func:`eloledger.judges.code.judge_folder` in ``dir`` mode: the candidate process imports
the agent's modules from the copy, the tests process (which never sees the copy) evaluates
the asserts and reaches those modules only through the plain-data proxy. So the agent's own
``test_*.py``, ``conftest.py``, ``sitecustomize.py`` or a file named like the judge's cannot
change how the task's tests run, and a process the agent left running cannot edit the files
being judged.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from eloledger import sandbox
from eloledger.judges.code import TestsVerdict, judge_folder

SKIP = frozenset({"__pycache__", ".git", "node_modules"})
MAX_FILES = 20_000
MAX_BYTES = 256 << 20  # within the candidate sandbox's tmpfs (judges.code)


def safe_copy(src: Path, dst: Path, *, skip: frozenset[str] = SKIP) -> list[str]:
    """Copy ``src`` to ``dst`` without following any symlink out of it; what was left out.

    A symlink is recreated only when its target resolves inside ``src`` (so it still points
    inside the copy); devices, FIFOs and sockets are never copied; at most ``MAX_FILES``
    files and ``MAX_BYTES`` bytes."""
    root = Path(os.path.realpath(src))
    left_out: list[str] = []
    files = size = 0
    dst.mkdir(parents=True, exist_ok=True)
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        rel_dir = here.relative_to(root)
        for name in sorted(dirs):
            path = here / name
            if name in skip:
                dirs.remove(name)
            elif path.is_symlink():
                dirs.remove(name)
                names.append(name)  # handled as a link below
            else:
                (dst / rel_dir / name).mkdir(exist_ok=True)
        for name in sorted(names):
            path, rel = here / name, rel_dir / name
            if path.is_symlink():
                target = Path(os.path.realpath(path))
                if target == root or root in target.parents:
                    os.symlink(os.path.relpath(target, os.path.realpath(here)), dst / rel)
                else:
                    left_out.append(f"{rel} (symlink out of the folder)")
                continue
            if not path.is_file():
                left_out.append(f"{rel} (not a regular file)")
                continue
            n = path.stat().st_size
            if files >= MAX_FILES or size + n > MAX_BYTES:
                left_out.append(f"{rel} (over the copy limit)")
                continue
            shutil.copyfile(path, dst / rel, follow_symlinks=False)
            files, size = files + 1, size + n
    return left_out


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
        safe_copy(Path(workdir), work)
        return judge_folder(work, "dir", tests, timeout_s, memory_mb, kind)

