"""Tests judge: the task's asserts decide, in a process the judged code cannot reach.

Why two processes and not one: the candidate's own process can rewrite anything in its
interpreter (``__main__``, ``builtins``, open files, ``os._exit``), so a verdict computed,
printed or written there is whatever the candidate wants. Here the judge is split:

- the **candidate** process (:func:`eloledger.judges.harness.serve`) loads the reply's code
  (or the agent's folder, :mod:`.workdir`) and only answers requests: call this function with
  these arguments, read that attribute;
- the **tests** process (:func:`eloledger.judges.harness.judge`) runs the task's tests with
  the candidate's names bound to proxies. Arguments and results cross a socket as plain data
  (numbers, strings, lists, dicts, tuples, sets, bytes, None, bool; exceptions by the name of
  their builtin class), decoded into builtin objects, so an object whose ``__eq__`` always
  says True cannot cross, and nothing the candidate prints, writes or exits with is read.

**Every statement counts.** The tests module is split (``ast``) into its top-level statements
and every one runs, in order, whatever happened to the ones before. Any exception escaping a
statement fails the task, whatever the statement is: an ``assert``, a bare call, a ``for``
loop of asserts, ``try/except/else: raise AssertionError``, a ``with`` block. The score is the
fraction of checks that held, where a check is every statement but setup (imports, def/class,
assignments, ``pass``), plus each setup statement that raised; the task passes only when
every statement ran.

**Calls into the candidate return plain data or fail.** A value of a builtin type, or of a
subclass of one (a namedtuple, a ``Counter``, a ``str`` subclass), crosses as that builtin,
read through the builtin's own methods (never the subclass's ``__eq__``, ``__str__``,
``__iter__``). ``StopIteration``, ``StopAsyncIteration`` and ``GeneratorExit`` raised by the
candidate arrive as ``RuntimeError``, so ``all(map(is_prime, xs))`` cannot end early on a
forged end of iteration. Any other object stays a proxy, and the tests side never asks the
candidate to decide a comparison for it: ``==`` is identity, truth is refused, ``x in obj``
is decided here over the plain items the object iterates to (never its ``__contains__``),
its str methods (``startswith``, ``lower``, …) are refused (a real str crosses as a str), and
an attribute is read only if the object really has it (no ``__getattr__`` answering anything).

Each process runs in its own OS sandbox (:mod:`eloledger.sandbox`: own uid, PID and network
namespace, private size-limited /tmp, no view of $HOME, the ledger or the spec, CPU, memory,
process and output limits). The tests process never sees the candidate's files; the candidate
process never sees the tests. eloledger reads one JSON line from the tests process only.

What it cannot judge (the spec author must then restate the test on returned values):
identity (``f(x) is x``), in-place mutation of an argument (arguments are copies: assert on
a return value instead), callbacks passed *to* the candidate (functions do not cross),
``isinstance`` against the candidate's own classes, the candidate's stdout, and exceptions of
the candidate's own classes other than by their builtin base (``class CycleError(ValueError)``
is seen as ``ValueError``). An object that is not plain data comes back as a reference that
supports calls, the attributes it really has (none named like a str method, so a candidate
class's own ``find``, ``split``, ``count`` or ``index`` cannot be called from the tests; list and
dict method names that str lacks, such as ``pop`` or ``get``, stay callable: object APIs use them), items, ``len``, ``in`` and
iteration, but has no truth value and equals only itself. ``StopIteration`` raised by the
candidate cannot be caught as such (it is a ``RuntimeError`` here). The candidate has the standard library only (``python -I -S``). Names of
builtins and standard modules are never taken from the candidate (its own ``len`` or ``math``
would otherwise answer the tests' questions): the tests import what they use.
"""

from __future__ import annotations

import json
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from eloledger import sandbox
from eloledger.judges.extract import extract_code
from eloledger.judges.rule import Verdict

HARNESS = Path(__file__).with_name("harness.py")
_INSIDE = "/.eloledger/harness.py"


@dataclass(frozen=True)
class TestsVerdict(Verdict):
    sandbox: str | None = None  # what the judged code ran in: bwrap | none


def judge_tests(
    content: str | None,
    tests: str,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
    sandbox_kind: str = "auto",
) -> TestsVerdict:
    """Run the reply's code (last fenced block) against ``tests``; score = fraction passed."""
    kind = sandbox.resolve(sandbox_kind)  # refuses (UserError) before anything runs
    code = extract_code(content)
    if not code:
        return TestsVerdict(0.0, False, None, "no code in the reply", sandbox=kind)
    with tempfile.TemporaryDirectory(prefix="eloledger-judge-") as folder:
        work = Path(folder, "work")
        work.mkdir()
        (work / "candidate.py").write_text(code, encoding="utf-8")
        return judge_folder(work, "code", tests, timeout_s, memory_mb, kind)


def judge_folder(
    work: Path, mode: str, tests: str, timeout_s: float, memory_mb: int, kind: str
) -> TestsVerdict:
    """``work`` judged by ``tests`` (sandboxed, the candidate sees a copy of it in its tmpfs;
    with ``kind = "none"`` it runs in ``work`` itself, so give a throwaway folder)."""
    with tempfile.TemporaryDirectory(prefix="eloledger-tests-") as folder:
        judge_dir = Path(folder)
        (judge_dir / "tests.py").write_text(tests, encoding="utf-8")
        judge_dir.chmod(0o755)
        (judge_dir / "tests.py").chmod(0o644)
        inside = kind == "bwrap"
        harness = _INSIDE if inside else str(HARNESS)
        tests_path = "/judge/tests.py" if inside else str(judge_dir / "tests.py")
        ours, theirs = socket.socketpair()
        cand_limits = sandbox.Limits(
            cpu_s=timeout_s + 1, wall_s=timeout_s + 30, memory_mb=memory_mb, nproc=16,
            tmp_mb=320,  # the copy of the candidate's files (workdir.MAX_BYTES) and its writes
        )
        tests_limits = sandbox.Limits(
            cpu_s=timeout_s + 20, wall_s=timeout_s + 30, memory_mb=max(memory_mb, 256), nproc=4
        )
        procs = []
        try:
            procs.append(
                sandbox.spawn(
                    [sandbox.python(), "-I", "-S", harness, "candidate", str(ours.fileno()), mode,
                     "/src" if inside else str(work)],
                    ro_dirs=[(HARNESS, _INSIDE), (work, "/src")] if inside else [],
                    limits=cand_limits,
                    cwd="/tmp" if inside else str(work),
                    kind=kind,
                    pass_fds=[ours.fileno()],
                    stdout=subprocess.DEVNULL,
                )
            )
            ours.close()
            tests_proc = sandbox.spawn(
                [sandbox.python(), "-I", "-S", harness, "tests", str(theirs.fileno()),
                 repr(float(timeout_s)), tests_path],
                ro_dirs=[(HARNESS, _INSIDE), (judge_dir, "/judge")] if inside else [],
                limits=tests_limits,
                kind=kind,
                pass_fds=[theirs.fileno()],
            )  # fmt: skip
            procs.append(tests_proc)
            theirs.close()
            out, _, timed_out, _ = sandbox.collect(tests_proc, tests_limits)
        finally:
            ours.close()
            theirs.close()
            for proc in procs:
                sandbox.kill(proc)
    if timed_out:
        return TestsVerdict(0.0, False, None, f"timed out after {timeout_s:g} s", sandbox=kind)
    return _verdict(bytes(out), timeout_s, kind)


def _verdict(out: bytes, timeout_s: float, kind: str) -> TestsVerdict:
    """The tests process's one line (its own, trusted); anything else is a judge failure."""
    try:
        result = json.loads(out.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError, UnicodeDecodeError):
        return TestsVerdict(0.0, False, None, "the tests process gave no verdict", sandbox=kind)
    gone = result.get("gone")
    if gone == "timed out":
        return TestsVerdict(0.0, False, None, f"timed out after {timeout_s:g} s", sandbox=kind)
    if gone:
        detail = f"the candidate process {gone} (memory or CPU limit?)"
        return TestsVerdict(0.0, False, None, detail, sandbox=kind)
    total = max(1, int(result.get("total") or 1))
    passed = min(total, int(result.get("passed") or 0))
    ok = passed == total and not result.get("failed")
    return TestsVerdict(passed / total, ok, None, result.get("error"), sandbox=kind)
