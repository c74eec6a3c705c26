"""Tests judge: run a reply's code against the task's asserts in a separate, limited process.

Why a subprocess and not ``exec``: model code may loop forever, eat memory or call
``sys.exit``. The child is ``python -I`` (no user site, no env vars honoured) in a temporary
directory; it sets its own CPU, address-space, file-size and process limits before it runs
anything, and the parent kills it at the wall-clock timeout. Each top-level ``assert`` in the
tests counts as one test, so the score is the fraction passed.
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

from eloledger.judges.extract import extract_code
from eloledger.judges.rule import Verdict

_HARNESS = r"""
import ast, json, resource, sys
cpu, mem = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
except (ValueError, OSError):
    pass
result = {"total": 0, "passed": 0, "error": None}
out = open("result.json", "w")
def finish():
    out.write(json.dumps(result)); out.close()
tests = ast.parse(open("tests.py").read())
result["total"] = sum(isinstance(node, ast.Assert) for node in tests.body) or 1
ns = {"__name__": "candidate"}
try:
    exec(compile(open("candidate.py").read(), "candidate.py", "exec"), ns)
except BaseException as exc:
    result["error"] = "candidate: " + repr(exc)[:300]
    finish(); sys.exit(0)
asserts = sum(isinstance(node, ast.Assert) for node in tests.body)
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
finish()
"""


def judge_tests(
    content: str | None,
    tests: str,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
) -> Verdict:
    """Run the reply's code (last fenced block) against ``tests``; score = fraction passed."""
    code = extract_code(content)
    if not code:
        return Verdict(0.0, False, None, "no code in the reply")
    with tempfile.TemporaryDirectory(prefix="eloledger-judge-") as folder:
        work = Path(folder)
        (work / "candidate.py").write_text(code, encoding="utf-8")
        (work / "tests.py").write_text(tests, encoding="utf-8")
        (work / "harness.py").write_text(_HARNESS, encoding="utf-8")
        cpu = max(1, int(timeout_s + 0.999))
        proc = subprocess.Popen(
            [sys.executable, "-I", "harness.py", str(cpu), str(memory_mb * 1024 * 1024)],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            start_new_session=True,  # its own process group, so a forked child dies with it
        )
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
            result = json.loads((work / "result.json").read_text())
        except (OSError, ValueError):
            return Verdict(0.0, False, None, "the test process died (memory or CPU limit?)")
    total = max(1, int(result.get("total") or 1))
    passed = min(total, int(result.get("passed") or 0))
    return Verdict(passed / total, passed == total, None, result.get("error"))
