"""What is kept of an agent session's folders, and how its session logs are read.

Why: the session's HOME and work folder are written by the agent, and a HOME left by a
session killed with eloledger is read again by ``--resume``. So nothing in them is read in
place: the CLI's log folders are first copied through directory descriptors
(:func:`eloledger.safetree.copy_tree`: no symlink followed, no FIFO or device opened, caps)
into a folder of eloledger's own, and only that copy is scanned or kept. A symlinked
``~/.claude/projects`` is left out, not followed; a FIFO named ``*.jsonl`` is never opened.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from eloledger.judges.workdir import CAPS, SKIP, safe_copy
from eloledger.safetree import CopyReport, copy_tree, remove_tree

# where each CLI writes its session logs under its HOME (docs/observed/agents.md)
LOG_DIRS = (".claude/projects", ".codex/sessions", ".codex/archived_sessions", ".gemini/tmp")


@contextlib.contextmanager
def private_logs(home: Path) -> Iterator[Path | None]:
    """A private copy of the log folders under ``home``, laid out like it (give it to the log
    readers as HOME); None when the folder is gone or the copy tripped a cap."""
    folder = Path(tempfile.mkdtemp(prefix="eloledger-logs-", dir=_scratch()))
    try:
        try:
            report = copy_tree(home, folder / "home", caps=CAPS, only=LOG_DIRS)
        except OSError:
            report = None
        yield folder / "home" if report is not None and report.tripped is None else None
    finally:
        remove_tree(folder)


def _scratch() -> str | None:
    """Where a private copy of the logs is made: a memory file system when there is one
    (``/dev/shm``: read at every checkpoint step, and removing folders on a busy disk cost
    6 ms each), else the temporary folder."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def keep_home_logs(home: Path) -> tuple[list[Path], CopyReport | None]:
    """Replace the agent's HOME by a private copy of its log folders (the rest of it, caches
    and whatever the agent left, is removed); the kept ``*.jsonl`` files."""
    kept = home.with_name(home.name + ".kept")
    remove_tree(kept)
    try:
        report: CopyReport | None = copy_tree(home, kept, caps=CAPS, only=LOG_DIRS)
    except OSError:
        report = None
    remove_tree(home)
    if report is None or report.tripped is not None:
        remove_tree(kept)
        return [], report
    os.rename(kept, home)
    logs = sorted(home / rel for rel in report.manifest if rel.endswith(".jsonl"))
    return logs, report


def keep_work(work: Path, evidence: Path) -> CopyReport:
    """The final copy of the work folder, ``<evidence>/work`` (what is judged and kept)."""
    target = evidence / "work"
    remove_tree(target)
    report = safe_copy(work, target, skip=SKIP)
    if report.tripped is not None:
        remove_tree(target)  # a part of the tree is not what the agent left: none is kept
    return report
