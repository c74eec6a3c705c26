"""What the judge knows stays out of the candidate's view.

- a scored task's scorer (with its hidden cases) is never a file any program it runs can read;
- ``scorer_cmd`` runs isolated: the candidate's own ``json.py`` is never imported;
- eloledger's own package data (every built-in task's reference solution) is not in any
  sandbox, even where eloledger is pip-installed under a folder the sandbox binds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from eloledger.judges.scorer import judge_scored
from eloledger.tasks import Task
from sandbox_support import need_sandbox

ROOT = Path(__file__).resolve().parents[2]
# the hidden case: the scorer runs the candidate's solve.py and wants this number back
HIDDEN_SCORER = """import subprocess, sys
EXPECTED = 424242

def score(work):
    done = subprocess.run(["python3", "solve.py"], cwd=work, capture_output=True, text=True,
                          timeout=10)
    words = done.stdout.split()
    return 1.0 if words and words[-1] == str(EXPECTED) else 0.0
"""
# reads the expected answer out of whatever file or process of the judge it can find
PEEKER = r"""import glob, os, re
found = "0"
for path in (["/judge/scorer.py", "/proc/self/cmdline"] + glob.glob("/judge/*")
             + glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/fd/*")
             + glob.glob("/proc/[0-9]*/environ") + glob.glob("/tmp/**", recursive=True)):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe must not hang the reader
        try:
            hit = re.search(rb"EXPECTED = (\d+)", os.read(fd, 1 << 20))
        finally:
            os.close(fd)
    except OSError:
        continue
    if hit:
        found = hit.group(1).decode()
print(found)
"""


def _work(tmp_path: Path, files: dict[str, str]) -> Path:
    work = tmp_path / "work"
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).write_text(text)
    return work


def test_no_program_the_scorer_runs_can_read_the_scorer(tmp_path: Path) -> None:
    need_sandbox()
    task = Task("t", "p", kind="agent", files={}, scorer=HIDDEN_SCORER)
    peek = judge_scored(_work(tmp_path, {"solve.py": PEEKER}), task)
    assert peek.score == 0.0, peek.detail
    honest = judge_scored(_work(tmp_path / "h", {"solve.py": "print(6 * 70707)\n"}), task)
    assert honest.score == 1.0, honest.detail


@pytest.mark.parametrize(
    "cmd",
    [
        ("python3", "-c", "import json; print(json.loads('[3]')[0])"),
        ("sh", "-c", "python3 -c 'import json; print(json.loads(\"[3]\")[0])'"),
    ],
    ids=["python", "python-from-sh"],
)
def test_scorer_cmd_never_imports_the_candidates_modules(
    tmp_path: Path, cmd: tuple[str, ...]
) -> None:
    need_sandbox()
    work = _work(tmp_path, {"json.py": "def loads(text):\n    return [1000000]\n"})
    verdict = judge_scored(work, Task("t", "p", kind="agent", files={}, scorer_cmd=cmd))
    assert verdict.score == 3.0, verdict.detail


# a reply that defines nothing itself: it runs every reference solution it can find
SOLUTION_THIEF = """
import glob, json
for pattern in ("/usr/local/lib/*/eloledger/data/tasks/*.jsonl",
                "/usr/lib/python3*/*-packages/eloledger/data/tasks/*.jsonl"):
    for path in glob.glob(pattern):
        try:
            for line in open(path):
                exec(json.loads(line).get("solution") or "", globals())
        except Exception:
            pass
"""


@pytest.fixture(scope="module")
def installed_under_usr() -> Iterator[Path]:
    """eloledger pip-installed (a built wheel, not editable) into a folder under /usr, which
    every sandbox binds: as in a Docker image's /usr or a system Python's site-packages.
    Slow (a few seconds to build the wheel), once per module: only a real install shows
    where pip puts the package data."""
    if os.geteuid() != 0:
        pytest.skip("installs under /usr: needs root")
    build = Path(tempfile.mkdtemp(prefix="eloledger-build-"))
    target = Path(tempfile.mkdtemp(prefix="eloledger-probe-", dir="/usr/local/lib"))
    try:
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, build / name)
        shutil.copytree(ROOT / "src", build / "src", ignore=shutil.ignore_patterns("*.egg-info"))
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
             "--no-index", "--target", str(target), str(build)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        target.chmod(0o755)
        yield target
    finally:
        shutil.rmtree(build, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)


def test_reference_solutions_are_out_of_reach_of_an_installed_eloledger(
    installed_under_usr: Path,
) -> None:
    need_sandbox()
    assert (installed_under_usr / "eloledger" / "data" / "tasks" / "code.jsonl").is_file()
    probe = (
        "import json, sys\nimport eloledger\nfrom eloledger.judges.code import judge_tests\n"
        "from eloledger.tasks.registry import builtin_task\n"
        "task = builtin_task('code-001')\n"
        "thief = judge_tests('```python\\n' + sys.argv[1] + '\\n```', task.tests)\n"
        "honest = judge_tests('```python\\n' + task.solution + '\\n```', task.tests)\n"
        "print(json.dumps([eloledger.__file__, thief.score, honest.score]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, SOLUTION_THIEF], capture_output=True, text=True,
        timeout=60, env={**os.environ, "PYTHONPATH": str(installed_under_usr)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    where, thief, honest = json.loads(done.stdout.splitlines()[-1])
    assert where.startswith(str(installed_under_usr))  # the installed copy judged
    assert (thief, honest) == (0.0, 1.0)
