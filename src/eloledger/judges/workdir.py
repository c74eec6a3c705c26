"""Tests judge for agent sessions: run a task's asserts in the directory the agent edited.

Unlike :mod:`eloledger.judges.code` there is no reply to extract code from: the agent's result
is the file tree it left behind. The harness and the tests live in a separate temporary folder
(the agent cannot have edited them); the child runs with the session's working directory as
its cwd and first on ``sys.path`` (``python -I`` would drop it, so ``-E -s`` is used), under
the same CPU, memory, file-size and process limits, and is killed with its whole process group
at the wall-clock timeout. Each top-level ``assert`` counts as one test.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from eloledger.judges.rule import Verdict

_HARNESS = r"""
import ast, json, os, resource, sys
cpu, mem, tests_path, result_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
result = {"total": 0, "passed": 0, "error": None}
tests = ast.parse(open(tests_path).read())
out = open(result_path, "w")
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
except (ValueError, OSError):
    pass
sys.path.insert(0, os.getcwd())
asserts = sum(isinstance(node, ast.Assert) for node in tests.body)
result["total"] = asserts or 1
ns = {"__name__": "agent_tests"}
setup_failed = False
for node in tests.body:
    code = compile(ast.Module(body=[node], type_ignores=[]), "tests.py", "exec")
    try:
        exec(code, ns)
        if isinstance(node, ast.Assert):
            result["passed"] += 1
    except BaseException as exc:
        if result["error"] is None:
            result["error"] = f"line {node.lineno}: " + repr(exc)[:300]
        if not isinstance(node, ast.Assert):
            setup_failed = True
            break
if not asserts and not setup_failed:
    result["passed"] = 1
out.write(json.dumps(result)); out.close()
"""


def judge_workdir(
    workdir: Path, tests: str, *, timeout_s: float = 5.0, memory_mb: int = 512
) -> Verdict:
    """Run ``tests`` against the files in ``workdir``; score = fraction of asserts passed."""
    with tempfile.TemporaryDirectory(prefix="eloledger-wdjudge-") as folder:
        aside = Path(folder)
        (aside / "harness.py").write_text(_HARNESS, encoding="utf-8")
        (aside / "tests.py").write_text(tests, encoding="utf-8")
        result_path = aside / "result.json"
        cpu = max(1, int(timeout_s + 0.999))
        proc = subprocess.Popen(
            [sys.executable, "-E", "-s", "-B", str(aside / "harness.py"), str(cpu),
             str(memory_mb * 1024 * 1024), str(aside / "tests.py"), str(result_path)],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            start_new_session=True,
        )  # fmt: skip
        try:
            proc.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if timed_out:
            return Verdict(0.0, False, None, f"timed out after {timeout_s:g} s")
        try:
            result = json.loads(result_path.read_text())
        except (OSError, ValueError):
            return Verdict(0.0, False, None, "the test process died (memory or CPU limit?)")
    total = max(1, int(result.get("total") or 1))
    passed = min(total, int(result.get("passed") or 0))
    return Verdict(passed / total, passed == total, None, result.get("error"))
