"""Snapshots and the final copy of an agent's folder cannot be steered onto a host file.

An attacker inside the folder keeps swapping a folder with a symlink (``renameat2`` with
``RENAME_EXCHANGE`` every 0.5 ms, through ctypes) while eloledger takes checkpoint snapshots
(the real :class:`~eloledger.runner.checkpoints.Checkpointer`) and final copies
(:func:`~eloledger.judges.workdir.safe_copy`). One symlink points at a folder holding a 0600 key
file, the other at ``/proc/self`` (the copier's own environment, and ``pagemap``: a "regular
file" of size 0 with ~256 GB behind it). The copier runs in a subprocess whose file-size limit
(RLIMIT_FSIZE) keeps a copy that reads ``pagemap`` from filling the disk: it shows as an error.
Run as root and as a normal user (``setpriv``), where the key file is that user's own.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agent_standin import as_root, normal_user

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="renameat2 and /proc: Linux")

CANARY = "sk-canary-snapshot-" + "7d" * 12
MARKER = "ELOLEDGER_ENV_MARKER_" + "3f" * 8
FSIZE = 16 << 20  # the copier's own file-size limit (a guard for the test machine's disk)

SWAPPER = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
    time.sleep(0.0005)
"""

COPIER = r"""
import asyncio, json, os, resource, signal, subprocess, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
from eloledger.agents.events import SessionState
from eloledger.judges.workdir import safe_copy
from eloledger.runner.checkpoints import Checkpointer

base, rounds = Path(sys.argv[1]), int(sys.argv[2])
host, work, out = base / "host", base / "work", base / "out"
host.mkdir(mode=0o700)
key = host / "id_key"
key.write_text(CANARY)
key.chmod(0o600)
work.mkdir()
(work / "answer.txt").write_text("42")
# the agent's own folders hold files named like the targets' (a name listed in the real
# folder is then opened through the symlink swapped in its place)
for real, link, target, names in (("d", "l", str(host), ["id_key"]),
                                   ("p", "q", "/proc/self", ["environ", "pagemap"])):
    (work / real).mkdir()
    for name in names:
        (work / real / name).write_text("mine")
    os.symlink(target, work / link)
swappers = [
    subprocess.Popen([sys.executable, "-c", SWAPPER, a, b], cwd=work)
    for a, b in (("d", "l"), ("p", "q"))
]
try:
    time.sleep(0.1)
    state = SessionState(agent="claude-code")
    ckpt = Checkpointer("turns", work, out / "checkpoints", state)
    for i in range(rounds):
        state.turns = 2 ** (i + 1)  # every round crosses the next step of the 1.5x grid
        ckpt.poke()
        time.sleep(0.01)
        ckpt.poke()  # the snapshot is taken at the event after the crossing
        time.sleep(0.01)
    asyncio.run(ckpt.finish())
    errors, tripped = [], []
    for i in range(5):
        try:
            tripped.append(getattr(safe_copy(work, out / f"final{i}"), "tripped", None))
        except OSError as exc:  # EFBIG: pagemap read past the file-size limit
            errors.append(repr(exc))
finally:
    for proc in swappers:
        proc.kill()
print(json.dumps({"snapshots": len(ckpt.marks), "note": getattr(ckpt, "note", None),
                  "tripped": tripped, "errors": errors}))
"""


def _run_copier(folder: Path, user: list[str], python: str, src: Path) -> dict:
    script = f"FSIZE = {FSIZE}\nCANARY = {CANARY!r}\nSWAPPER = {SWAPPER!r}\n" + COPIER
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "PYTHONPATH": str(src), MARKER: "1"}
    done = subprocess.run(
        [*user, python, "-c", script, str(folder), "25"],
        capture_output=True, text=True, timeout=120, cwd=folder, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _check_evidence(out: Path) -> None:
    """No host byte, nothing past a few bytes in all, no link, private modes."""
    leaked, links, modes, total = [], [], [], 0
    for path in out.rglob("*"):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            links.append(path)
            continue
        want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if stat.S_IMODE(info.st_mode) != want:
            modes.append((str(path), oct(info.st_mode)))
        if stat.S_ISREG(info.st_mode):
            data = path.read_bytes()
            if CANARY.encode() in data or MARKER.encode() in data:
                leaked.append(str(path.relative_to(out)))
            total += len(data)
    assert leaked == [], leaked
    assert total < 64 << 10, total  # the folder holds a few bytes; pagemap was never read
    assert links == [] and modes == [], (links, modes[:5])


@pytest.mark.parametrize("who", ["root", "user"])
def test_a_swapping_agent_never_steers_a_snapshot_or_the_final_copy(who: str) -> None:
    if who == "root" and os.geteuid() != 0:
        pytest.skip("the root-only key file needs root")
    with tempfile.TemporaryDirectory(prefix="eloledger-steer-") as name:
        become = normal_user if who == "user" else as_root
        user, python, src, folder = become(Path(name))
        result = _run_copier(folder, user, python, src)
        assert result["snapshots"] >= 10, result  # each one raced against the swapper
        out = folder / "out"
        _check_evidence(out)
        assert result["note"] is None and result["tripped"] == [None] * 5, result
        assert result["errors"] == [], result
        # what the agent put in its folder is copied (a folder the swapper is moving may be
        # met under either name, or both: without the agent stopped a copy is not one moment)
        for i in range(5):
            final = out / f"final{i}"
            assert final.is_dir(), final
            assert (final / "answer.txt").read_text() == "42"
            assert {p.read_text() for p in final.rglob("*") if p.is_file()} == {"42", "mine"}
