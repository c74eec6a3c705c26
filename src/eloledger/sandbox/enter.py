"""First program inside a sandbox: set the limits, drop to the sandbox's own uid, exec the target.

Runs as ``python -I -S enter.py SPEC_JSON -- ARGV...`` with the standard library only (it is
bound read-only into the sandbox; eloledger itself is not importable there). Why here and not
in the caller: resource limits set *inside* a user namespace count that namespace's processes
only, and a uid drop must happen after bubblewrap has made the mounts.

SPEC_JSON: ``{"uid": int | null, "cpu_s": int, "memory_mb": int | null, "nproc": int,
"file_mb": int, "cwd": str}``. With ``uid`` and root privileges (bubblewrap's privileged mode,
used when eloledger runs as root), the process becomes that uid and keeps no capability, so
``RLIMIT_NPROC`` is enforced (the kernel never enforces it for uid 0).
"""

from __future__ import annotations

import json
import os
import resource
import sys


def _limit(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))


def main() -> None:
    spec = json.loads(sys.argv[1])
    argv = sys.argv[3:]
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_CPU, int(spec["cpu_s"]))
    _limit(resource.RLIMIT_FSIZE, int(spec["file_mb"]) << 20)
    if spec.get("memory_mb"):
        _limit(resource.RLIMIT_AS, int(spec["memory_mb"]) << 20)
    uid = spec.get("uid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # from 0 to another uid: every capability is gone
        if os.geteuid() == 0 or os.getuid() == 0:
            raise SystemExit("sandbox: could not leave uid 0")
    _limit(resource.RLIMIT_NPROC, int(spec["nproc"]))
    os.chdir(spec.get("cwd") or "/tmp")
    if argv[:3] == [sys.executable, "-I", "-S"] and len(argv) > 3 and argv[3].endswith(".py"):
        # the same interpreter and flags: run the script here, saving one interpreter start
        import runpy

        sys.argv = argv[3:]
        runpy.run_path(argv[3], run_name="__main__")
        return
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
