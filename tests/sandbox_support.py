"""Shared by the sandbox tests: the skip where no sandbox can be made, and process lookup."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from eloledger import sandbox
from eloledger.errors import UserError


def need_sandbox() -> str:
    """The sandbox kind, or skip the test with the reason there is none here."""
    try:
        return sandbox.resolve("auto")
    except UserError as exc:
        pytest.skip(f"no sandbox here: {exc}")


def processes_with(marker: str) -> list[int]:
    """Pids (host view) whose command line contains ``marker``: what an attack left running."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def importable_copy(folder: Path) -> Path:
    """A copy of eloledger's source and its sandbox's pure-Python dependency in ``folder``,
    for a PYTHONPATH that another user's interpreter (``/usr/bin/python3``) can read."""
    import pyseccomp

    from eloledger import sandbox

    src = folder / "src"
    shutil.copytree(Path(sandbox.__file__).parents[2], src)
    shutil.copy(pyseccomp.__file__, src / "pyseccomp.py")
    return src
