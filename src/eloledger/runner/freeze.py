"""Hold an agent's processes still (SIGSTOP, then SIGCONT) while its folder is snapshotted.

Why: a snapshot of a folder that is being written is a mix of two moments. Stopping every
process of the session first makes the snapshot one moment of its work. (Safety does not rest
on this: the copy itself never follows a link, see :mod:`eloledger.safetree`; a process that
escapes the stop can only make the snapshot less consistent.)

The session's processes are its CLI's process and every descendant, found by parent pid in
``/proc`` (a sandbox's PID namespace init is the CLI's child, and orphans are reparented to
it, so nothing inside is missed). A process can fork between the listing and the stop, so the
listing is repeated until every process found is stopped. Signals go through pidfds where the
platform has them, so a pid reused meanwhile is never signalled by mistake.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

ROUNDS = 50  # listings before giving up on a tree that keeps forking
SETTLE_S = 0.2  # at most this long for stops to land (a process in a system call)


@contextlib.contextmanager
def frozen(pid: int | None) -> Iterator[int]:
    """Stop ``pid`` and its descendants for the block; yields how many were stopped."""
    if pid is None or not os.path.isdir("/proc"):
        yield 0
        return
    held: dict[int, int | None] = {}  # pid -> its pidfd (None: signalled by pid)
    try:
        _stop_all(pid, held)
        yield len(held)
    finally:
        for child, fd in held.items():
            _signal(child, fd, signal.SIGCONT)
            if fd is not None:
                os.close(fd)


def _stop_all(root: int, held: dict[int, int | None]) -> None:
    deadline = time.monotonic() + SETTLE_S
    for _ in range(ROUNDS):
        tree = _tree(root)
        new = [p for p in tree if p not in held]
        for child in new:
            try:
                fd = _pidfd(child)
            except OSError:
                continue  # gone already
            held[child] = fd
            _signal(child, fd, signal.SIGSTOP)
        if not new and all(_stopped(p) for p in tree):
            return
        if time.monotonic() > deadline:
            return
        if not new:
            time.sleep(0.001)


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (host pids), by the parent pid of every process."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        parent = _ppid(int(name))
        if parent is not None:
            children.setdefault(parent, []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # the command name sits in parentheses and may hold anything: split after the last one
    return data[data.rfind(b")") + 2 :].decode("ascii", "replace").split()


def _ppid(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields and len(fields) > 1 else None


def _stopped(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is None or fields[0] in ("T", "t", "Z", "X")  # stopped, or gone


def _pidfd(pid: int) -> int | None:
    """A pidfd for ``pid`` (None where the platform has none: then signalled by pid)."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except (NotImplementedError, PermissionError):
        return None


def _signal(pid: int, fd: int | None, sig: int) -> None:
    with contextlib.suppress(OSError):
        if fd is not None:
            signal.pidfd_send_signal(fd, sig)
        else:
            os.kill(pid, sig)
