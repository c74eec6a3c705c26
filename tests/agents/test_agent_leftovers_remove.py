"""What an agent leaves in its folders is removed, however it is shaped, and nothing else is.

The shapes: a 1200-deep folder chain (``shutil.rmtree`` recurses: RecursionError), 1,000 empty
folders, a folder its owner made unreadable (0000) and one made read-only (0500), a FIFO, and a
symlink to a folder outside (whose files must survive). Removed as root and, through
``setpriv``, as a normal user who owns the folders (as in a sandbox without root), in a
subprocess with the system Python.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agent_standin import as_root, normal_user

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux file modes and /proc")

REMOVER = r"""
import json, os, sys
from pathlib import Path
from eloledger.safetree import remove_tree

base = Path(sys.argv[1])
outside = base / "outside"
outside.mkdir()
(outside / "keep.txt").write_text("keep")
tree = base / "agent"
tree.mkdir()
fd = os.open(tree, os.O_RDONLY)
for _ in range(1200):
    os.mkdir("d", dir_fd=fd)
    fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
    os.close(old)
os.close(fd)
for i in range(1000):
    os.mkdir(tree / f"e{i}")
for name, mode in (("locked", 0o000), ("readonly", 0o500)):
    (tree / name / "inner").mkdir(parents=True)
    (tree / name / "inner" / "f.txt").write_text("x")
    (tree / name).chmod(mode)
os.mkfifo(tree / "pipe.jsonl")
os.symlink(outside, tree / "out")
remove_tree(tree)
print(json.dumps({"gone": not tree.exists(), "kept": (outside / "keep.txt").read_text()}))
"""


@pytest.mark.parametrize("who", ["root", "user"])
def test_remove_tree_removes_every_shape_and_follows_no_link(who: str) -> None:
    with tempfile.TemporaryDirectory(prefix="eloledger-rm-") as name:
        become = normal_user if who == "user" else as_root
        user, python, src, folder = become(Path(name))
        done = subprocess.run(
            [*user, python, "-c", REMOVER, str(folder)], capture_output=True, text=True,
            timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout) == {"gone": True, "kept": "keep"}
