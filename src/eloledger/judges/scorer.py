"""Scorer judge for scored tasks: a plain number from the task's own scorer, in the sandbox.

A scored task carries ``scorer`` (Python defining ``score(workdir_or_answer)``)
or ``scorer_cmd`` (a command that prints one number) and ``direction`` (``max``/``min``).
The scorer runs in its own OS sandbox (:mod:`eloledger.sandbox`: own uid, PID and network
namespace, no view of $HOME, the ledger, the spec or the session's evidence) with a
read-only copy of the candidate's files at ``/work`` (:func:`.workdir.safe_copy`), and the
number is read from the one JSON line :mod:`.score_harness` prints on a descriptor nothing
the candidate runs can reach. Never read: what the candidate printed, a result file it
wrote, its exit status.

What the judge knows stays out of the candidate's view: the scorer's source (with any hidden
cases in it) reaches the harness on its stdin and is never a file in the sandbox, so no
program the scorer starts can read it (the harness is non-dumpable and the seccomp filter
denies ``ptrace``/``process_vm_readv``). ``scorer_cmd`` runs isolated: a Python interpreter at
its head gets ``-I``, and every Python it starts runs with ``PYTHONSAFEPATH=1``, so nothing
is imported from the candidate's folder (its own ``json.py`` is never the standard one).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from eloledger import sandbox
from eloledger.judges.code import TestsVerdict
from eloledger.judges.workdir import judge_workdir, safe_copy
from eloledger.tasks.model import Task

HARNESS = Path(__file__).with_name("score_harness.py")
_INSIDE = "/.eloledger/score_harness.py"


@dataclass(frozen=True)
class ScoreVerdict(TestsVerdict):
    """``score`` is the raw number (None when the scorer failed); ``passed`` is the tests'
    verdict when the task also has tests, else None."""

    direction: str = "max"


def is_scored(task: Task) -> bool:
    return bool(task.scorer or task.scorer_cmd)


def judge_scored(
    target: Path | str,
    task: Task,
    *,
    answer: bool = False,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
    sandbox_kind: str = "auto",
) -> ScoreVerdict:
    """Score a work folder (``target`` a path) or, with ``answer``, a reply's text."""
    kind = sandbox.resolve(sandbox_kind)
    with tempfile.TemporaryDirectory(prefix="eloledger-score-") as folder:
        base = Path(folder)
        work = base / "work"
        if answer:
            work.mkdir()
            (work / "answer.txt").write_text(str(target), encoding="utf-8")
        else:
            safe_copy(Path(target), work)
        for path in (base, work, *work.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)  # readable by the sandbox's uid
        inside = kind == "bwrap"
        work_at = "/work" if inside else str(work)
        mode = "cmd" if task.scorer_cmd else ("answer" if answer else "code")
        argv = [
            sandbox.python(), "-I", "-S", _INSIDE if inside else str(HARNESS), mode, "-",
            f"{work_at}/answer.txt" if answer and mode != "cmd" else work_at,
            *isolated(task.scorer_cmd),
        ]  # fmt: skip
        limits = sandbox.Limits(
            cpu_s=timeout_s + 1, wall_s=timeout_s + 10, memory_mb=memory_mb, nproc=16,
            tmp_mb=64,
        )  # fmt: skip
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
               "SCORE_TIMEOUT_S": repr(float(timeout_s)), "PYTHONSAFEPATH": "1",
               "PYTHONNOUSERSITE": "1"}  # fmt: skip
        ro = [(HARNESS, _INSIDE), (work, "/work")] if inside else []
        result = sandbox.run(argv, ro_dirs=ro, limits=limits, cwd="/tmp" if inside else folder,
                             env=env, kind=kind, input=(task.scorer or "").encode())  # fmt: skip
    return _verdict(result, task, timeout_s, kind)


def isolated(cmd: tuple[str, ...]) -> list[str]:
    """``scorer_cmd`` with ``-I`` after a Python interpreter at its head (no script folder,
    no current folder, no PYTHON* variables on ``sys.path``)."""
    head = os.path.basename(cmd[0]) if cmd else ""
    if re.fullmatch(r"python(\d+(\.\d+)?)?", head) and "-I" not in cmd[1:2]:
        return [cmd[0], "-I", *cmd[1:]]
    return list(cmd)


def _verdict(result: sandbox.Result, task: Task, timeout_s: float, kind: str) -> ScoreVerdict:
    def failed(detail: str) -> ScoreVerdict:
        return ScoreVerdict(None, None, None, detail, sandbox=kind, direction=task.direction)  # type: ignore[arg-type]

    if result.timed_out:
        return failed(f"the scorer timed out after {timeout_s:g} s")
    lines = result.stdout.splitlines()
    if len(lines) > 1:  # the harness writes one line and exits: another writer got in
        return failed("the scorer's result channel carried more than its one line")
    try:
        line = json.loads(lines[0].decode("utf-8"))
    except (ValueError, IndexError, UnicodeDecodeError):
        return failed(f"the scorer process ended without a result (exit {result.returncode}: "
                      "over its CPU or memory limit?)")  # fmt: skip
    if not isinstance(line, dict):
        return failed("the scorer process gave no result line")
    score = line.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return failed(str(line.get("error") or "the scorer gave no number")[:300])
    return ScoreVerdict(float(score), None, None, None, sandbox=kind, direction=task.direction)  # type: ignore[arg-type]


def judge_work(
    workdir: Path,
    task: Task,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
    sandbox_kind: str = "auto",
) -> TestsVerdict | None:
    """The one judge of an agent's folder (its final tree and every checkpoint): the task's
    scorer for a scored task (with ``passed`` from its tests when it has them too), else its
    tests; None when the task has neither."""
    opts = {"timeout_s": timeout_s, "memory_mb": memory_mb, "sandbox_kind": sandbox_kind}
    tests = judge_workdir(workdir, task.tests, **opts) if task.tests else None
    if not is_scored(task):
        return tests
    verdict = judge_scored(workdir, task, **opts)
    return verdict if tests is None else replace(verdict, passed=tests.passed)
