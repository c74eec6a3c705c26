"""Shared by the sandbox tests: the skip where no sandbox can be made, and process lookup."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
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


@contextlib.contextmanager
def normal_user_folder() -> Iterator[tuple[Path, list[str]]]:
    """A folder a normal user can read, holding an importable copy of eloledger, and the
    command prefix that runs the system ``python3`` as that user (uid 1234) with it on
    ``sys.path``; skips where the test cannot become a normal user."""
    system_python = "/usr/bin/python3"
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(system_python):
        pytest.skip("needs root (to become a normal user), setpriv and /usr/bin/python3")
    import pyseccomp

    from eloledger import sandbox

    with tempfile.TemporaryDirectory(prefix="eloledger-user-") as name:
        folder = Path(name)
        folder.chmod(0o755)
        src = folder / "src"
        shutil.copytree(Path(sandbox.__file__).parents[2], src)
        shutil.copy(pyseccomp.__file__, src / "pyseccomp.py")  # the sandbox's one dependency
        yield folder, [
            "setpriv", "--reuid", "1234", "--regid", "1234", "--clear-groups", "env", "-i",
            "PATH=/usr/bin:/bin", f"HOME={folder}", f"PYTHONPATH={src}", system_python,
        ]  # fmt: skip
