"""The scorer's side of a scored task, run inside the sandbox (standard library only).

Started as ``python -I -S score_harness.py MODE - TARGET [CMD...]`` with the scorer's source
on stdin (read, then stdin is /dev/null: the source is never a file a program the scorer
starts could open); prints exactly one
JSON line, ``{"score": x}`` or ``{"error": "..."}``, on a private copy of its stdout. Before the
task's scorer runs, file descriptors 1 and 2 point at /dev/null and the process is made
non-dumpable, so neither the scorer's prints nor any program it starts from the candidate's
folder (which inherits /dev/null, or a pipe the scorer reads) can write that line, and a
same-uid process cannot open this process's descriptors through /proc.

MODE ``code``: the scorer defines ``score(target)``; TARGET is the work folder
(passed as a path string). ``answer``: as ``code`` with the answer text read from the TARGET
file passed instead. ``cmd``: the command after TARGET runs in the TARGET folder, stdin closed,
its stdout captured: its last non-empty line must be a number.
"""

import json
import math
import os
import subprocess
import sys


def _private_stdout():
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")  # os.dup: not inherited by children
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/<pid>/fd closed
    except Exception:  # noqa: BLE001 - not Linux: the fd is still not inherited
        pass
    return out


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"the scorer returned {type(value).__name__}, not a number")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"the scorer returned {value}")
    return value


def _run(mode, scorer, target, cmd):
    if mode == "cmd":
        done = subprocess.run(
            cmd, cwd=target, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, timeout=float(os.environ.get("SCORE_TIMEOUT_S", "10")),
        )  # fmt: skip
        lines = [x for x in done.stdout.decode("utf-8", "replace").splitlines() if x.strip()]
        if not lines:
            raise ValueError(f"the scorer command printed nothing (exit {done.returncode})")
        return float(lines[-1].strip())
    code = compile(scorer, "scorer.py", "exec")
    namespace = {"__name__": "eloledger_scorer"}
    exec(code, namespace)  # the task author's scorer: trusted, it only reads the candidate
    arg = target
    if mode == "answer":
        with open(target, encoding="utf-8") as fh:
            arg = fh.read()
    return namespace["score"](arg)


def main():
    out = _private_stdout()
    scorer = sys.stdin.buffer.read().decode("utf-8") if sys.argv[2] == "-" else ""
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    mode, target, cmd = sys.argv[1], sys.argv[3], sys.argv[4:]
    try:
        result = {"score": _number(_run(mode, scorer, target, cmd))}
    except BaseException as exc:  # noqa: BLE001 - any failure is a judged zero, named
        result = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    out.write(json.dumps(result) + "\n")
    out.flush()
    os._exit(0)  # no atexit or finaliser the scorer may have registered runs after the line


if __name__ == "__main__":
    main()
