"""The Python floor pyproject.toml states is the one CI checks.

CI (``scripts/ci_python_versions.sh``) installs and runs the demo on the oldest and the newest
Python the project claims; this keeps the claim, the classifiers and that script in step.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci_python_versions.sh"


def _versions() -> tuple[str, list[str], list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    claimed = [
        c.rsplit("::", 1)[1].strip()
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    ci = re.search(r"ELOLEDGER_CI_PYTHONS:-([0-9. ]+)\}", SCRIPT.read_text()).group(1).split()
    return project["requires-python"], claimed, ci


def test_the_floor_is_3_11_and_ci_runs_the_oldest_and_newest_claimed() -> None:
    floor, claimed, ci = _versions()
    assert floor == ">=3.11"  # httpx2 needs 3.11
    key = lambda v: tuple(map(int, v.split(".")))  # noqa: E731
    claimed.sort(key=key)
    assert claimed[0] == "3.11"
    assert ci == [claimed[0], claimed[-1]]


def test_a_python_the_machine_lacks_is_said_and_skipped(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ELOLEDGER_CI_PYTHONS": "3.99"}
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("python 3.99: not on this machine, skipped")
