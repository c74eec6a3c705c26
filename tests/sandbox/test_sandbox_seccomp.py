"""The sandbox's seccomp filter: each class of denied call, as root and as a normal user.

``seccomp_probe.py`` runs in a real bubblewrap sandbox and tries each call; without the
filter every one of them worked (a canary key read from the kernel keyring, a ``ptrace``
attach, ``pidfd_getfd``, ``process_vm_readv``, a new user namespace by ``clone`` and by
``unshare``, a 1 GB tmpfs mounted over the capped ``/tmp``).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eloledger import sandbox
from sandbox_support import need_sandbox, normal_user_folder

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"),
    reason="Linux sandbox; the probe knows x86-64 and arm64 syscall numbers",
)
PROBE = Path(__file__).resolve().parents[1] / "seccomp_probe.py"
DENIED = {
    "keyring": "EPERM", "ptrace": "EPERM", "pidfd_getfd": "EPERM", "process_vm_readv": "EPERM",
    "clone_newuser": "EPERM", "clone3": "ENOSYS", "unshare_newuser": "EPERM",
    "mount_tmpfs": "EPERM", "write /x": "EROFS", "write /dev/x": "EROFS",
    "write /dev/shm/x": "EROFS",
}  # fmt: skip


@contextlib.contextmanager
def canary_key() -> Iterator[tuple[str, str]]:
    """A key in this process's session keyring (inherited by every child): (name, secret)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    name, secret = f"eloledger-canary-{secrets.token_hex(4)}", "sk-canary-" + secrets.token_hex(8)
    key = libc.syscall(ctypes.c_long(nr[0]), b"user", name.encode(), secret.encode(),
                       ctypes.c_size_t(len(secret)), ctypes.c_long(-3))  # fmt: skip
    if key < 0:
        pytest.skip(f"no session keyring here (add_key errno {ctypes.get_errno()})")
    try:
        yield name, secret
    finally:
        libc.syscall(ctypes.c_long(nr[1]), ctypes.c_long(21), ctypes.c_long(key))  # INVALIDATE


def _probe_here(name: str, **kw) -> dict:  # noqa: ANN003
    res = sandbox.run([sandbox.python(), "-I", "-S", "/probe/seccomp_probe.py", name],
                      ro_dirs=[(PROBE.parent, "/probe")], **kw)  # fmt: skip
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_every_denied_call_fails_as_root() -> None:
    need_sandbox()
    if os.geteuid() != 0:
        pytest.skip("root mode: eloledger running as root")
    with canary_key() as (name, secret):
        seen = _probe_here(name)
    assert {k: seen[k] for k in DENIED} == DENIED
    assert seen["key"] is None and secret not in json.dumps(seen)
    assert seen["fds"] == [0, 1, 2, 3]  # the filter's descriptor is not left open (3: listdir)


def test_a_command_line_for_callers_with_their_own_process_handling_gets_the_filter() -> None:
    """``sandbox.command`` (agent sessions run it with asyncio): /bin/sh opens the filter."""
    need_sandbox()
    argv = sandbox.command([sandbox.python(), "-I", "-S", "/probe/seccomp_probe.py", "none"],
                           ro_dirs=[(PROBE.parent, "/probe")])  # fmt: skip
    assert argv[:2] == ["/bin/sh", "-c"]
    done = subprocess.run(argv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={"PATH": "/usr/bin:/bin"}, cwd="/")  # fmt: skip
    seen = json.loads(done.stdout)
    assert {k: seen[k] for k in DENIED} == DENIED and seen["fds"] == [0, 1, 2, 3]


def test_every_denied_call_fails_as_a_normal_user() -> None:
    need_sandbox()
    with normal_user_folder() as (folder, as_user):
        shutil.copy(PROBE, Path(folder, "seccomp_probe.py"))
        run_probe = (
            "import sys\nfrom eloledger import sandbox\n"
            "res = sandbox.run([sandbox.python(), '-I', '-S', '/probe/seccomp_probe.py', "
            f"sys.argv[1]], ro_dirs=[({str(folder)!r}, '/probe')])\n"
            "sys.stdout.write(res.stdout.decode() or res.stderr.decode())\n"
        )
        with canary_key() as (name, secret):
            done = subprocess.run([*as_user, "-c", run_probe, name], capture_output=True,
                                  text=True, timeout=60, cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert {k: seen[k] for k in DENIED} == DENIED
    assert seen["key"] is None and secret not in done.stdout


def test_a_nested_sandbox_keeps_its_namespaces_but_not_the_keyring() -> None:
    """The profile of an agent CLI that builds its own sandbox (Codex runs bubblewrap)."""
    need_sandbox()
    with canary_key() as (name, secret):
        seen = _probe_here(name, nested_sandbox=True)
    assert seen["keyring"] == "EPERM" and seen["key"] is None
    assert (seen["ptrace"], seen["pidfd_getfd"]) == ("EPERM", "EPERM")
    assert seen["unshare_newuser"] == "ok" and seen["mount_tmpfs"] == "ok"


def test_one_cap_on_every_byte_written() -> None:
    """/, /dev and /dev/shm are read-only: the capped /tmp is all a candidate can fill."""
    need_sandbox()
    code = """
import errno, os
seen = {}
for path in ("/x", "/dev/x", "/dev/shm/x", "/tmp/a", "/tmp/b"):
    try:
        with open(path, "wb") as fh:
            for _ in range(40):
                fh.write(b"x" * (1 << 20))
        seen[path] = "ok"
    except OSError as exc:
        seen[path] = errno.errorcode[exc.errno]
print(seen)
"""
    res = sandbox.run([sandbox.python(), "-I", "-S", "-c", code],
                      limits=sandbox.Limits(tmp_mb=64, file_mb=64))  # fmt: skip
    seen = eval(res.stdout)  # noqa: S307 - a dict of str printed by the probe above
    assert seen["/x"] == seen["/dev/x"] == seen["/dev/shm/x"] == "EROFS"
    assert seen["/tmp/a"] == "ok" and seen["/tmp/b"] == "ENOSPC"


def test_codex_builds_its_own_sandbox_inside_ours_only_with_the_nested_profile(
    tmp_path: Path,
) -> None:
    """Codex runs bubblewrap for its tools: a user namespace and mounts inside our sandbox.
    The judges' filter denies those; the agent profile for Codex allows them (and only them)."""
    import agent_gateway

    need_sandbox()
    reason = agent_gateway.missing_reason("codex")
    if reason is not None:
        pytest.skip(reason)
    from eloledger.runner.agent_session import cli_dirs

    exe = Path(agent_gateway.cli_path("codex") or "")
    home, work = tmp_path / "home", tmp_path / "work"
    for folder in (home / ".codex", home / "tmp", work):
        folder.mkdir(parents=True)
    path = f"{exe.parent}:/usr/local/bin:/usr/bin:/bin"
    env = {"PATH": path, "HOME": str(home), "TMPDIR": str(home / "tmp"),
           "CODEX_HOME": str(home / ".codex")}  # fmt: skip
    seen = {}
    for nested in (False, True):
        res = sandbox.run(
            [str(exe), "sandbox", "--", "sh", "-c", "echo inside-codex-sandbox"],
            rw_dirs=[work, home], ro_dirs=cli_dirs(exe, path), network=True, cwd=str(work),
            env=env, nested_sandbox=nested,
            limits=sandbox.Limits(cpu_s=60, wall_s=60, memory_mb=None, nproc=512, tmp_mb=64),
        )  # fmt: skip
        seen[nested] = (res.returncode, res.stdout.decode(), res.stderr.decode())
    assert seen[True][:2] == (0, "inside-codex-sandbox\n"), seen[True]
    assert seen[False][0] != 0 and "namespace" in seen[False][2], seen[False]
