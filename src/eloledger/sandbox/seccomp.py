"""The one seccomp filter every bubblewrap sandbox gets (judges, scorers and agent CLIs).

Why: bubblewrap's namespaces leave some doors open. The kernel keyring is not namespaced (a
candidate read a canary key from the session keyring); a process can still make a user
namespace and mount its own tmpfs past every size cap; ``pidfd_getfd``, ``ptrace`` and
``process_vm_readv/writev`` reach into other processes it can see. The filter answers EPERM to:

- the keyring: ``keyctl``, ``add_key``, ``request_key``;
- other processes' memory and descriptors: ``ptrace``, ``process_vm_readv``,
  ``process_vm_writev``, ``pidfd_getfd``;
- new namespaces: ``unshare`` and ``clone`` with any ``CLONE_NEW*`` flag, ``setns``; ``clone3``
  answers ENOSYS (its flags sit in memory a filter cannot read; the C library then falls back
  to ``clone``, which is checked);
- mounts: ``mount``, ``umount2``, ``pivot_root``, ``move_mount``, ``open_tree``, ``fsopen``,
  ``fsconfig``, ``fsmount``, ``fspick``, ``mount_setattr``.

``nested=True`` is the agent profile for a CLI that builds its own sandbox inside ours (Codex
runs bubblewrap): new user/mount namespaces and mounts are then allowed (all inside the
CLI's own namespaces), the keyring and process rules still hold.

How it is built: libseccomp (the C library every distribution ships; ``libseccomp.so.2``)
through ``pyseccomp``, a pure-Python ctypes binding on PyPI with the official binding's API.
libseccomp knows each architecture's syscall numbers and argument layout, which a hand-packed
classic BPF program would have to restate per architecture. The program (a few hundred bytes)
is built once per process (about 2 ms after the import) and handed to ``bwrap --seccomp FD``
from a private file.
"""

from __future__ import annotations

import atexit
import ctypes.util
import errno
import functools
import os
import shutil
import tempfile

KEYRING = ("keyctl", "add_key", "request_key")
PROCESSES = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd")
MOUNTS = (
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr",
)  # fmt: skip
# CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
NAMESPACE_FLAGS = (
    0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
    0x40000000,
)  # fmt: skip
CLONE_NEWTIME = 0x00000080
MISSING_FIX = "install libseccomp (apt-get install libseccomp2 / dnf install libseccomp)"


def available() -> str | None:
    """None when a filter can be built here, else why not (one line)."""
    if ctypes.util.find_library("seccomp") is None:
        return "libseccomp is not installed"
    try:
        program(False)
    except Exception as exc:  # noqa: BLE001 - any failure means no filter: say it
        return f"cannot build the seccomp filter ({type(exc).__name__}: {exc})"
    return None


@functools.cache
def program(nested: bool) -> bytes:
    """The compiled BPF program (``nested``: the profile of a CLI with its own sandbox)."""
    import pyseccomp as sc

    deny = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    for name in KEYRING + PROCESSES:
        rules.add_rule(deny, name)
    if not nested:
        for name in (*MOUNTS, "setns"):
            rules.add_rule(deny, name)
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        for flag in NAMESPACE_FLAGS:
            rules.add_rule(deny, "unshare", sc.Arg(0, sc.MASKED_EQ, flag, flag))
            if flag != CLONE_NEWTIME:  # clone's low byte is the exit signal, not a flag
                # flags are clone's first argument on x86-64, arm64, arm, riscv and ppc
                rules.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as fh:
        rules.export_bpf(fh)
        fh.seek(0)
        return fh.read()


_FOLDER: list[str] = []


def path(nested: bool) -> str:
    """A private file holding :func:`program` (re-written if something removed it)."""
    if not _FOLDER or not os.path.isdir(_FOLDER[0]):
        _FOLDER[:] = [tempfile.mkdtemp(prefix="eloledger-seccomp-")]
        atexit.register(shutil.rmtree, _FOLDER[0], True)
    target = os.path.join(_FOLDER[0], "nested.bpf" if nested else "filter.bpf")
    if not os.path.exists(target):
        fd = os.open(target + ".part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(program(nested))
        os.replace(target + ".part", target)
    return target
