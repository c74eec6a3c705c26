"""The OS sandbox every piece of untrusted code runs in (tests judges, agent CLIs).

API (small on purpose; the checkpoints build on it)::

    kind = sandbox.resolve("auto")            # "bwrap", or "none" only when asked for
    res = sandbox.run(argv, rw_dirs=[work], ro_dirs=[], limits=Limits(wall_s=10),
                      network=False)          # -> Result(returncode, stdout, stderr, ...)
    proc = sandbox.spawn(argv, ...)           # a Popen, for programs one talks to
    sandbox.kill(proc)                        # the whole tree, at once

What the program inside gets (bubblewrap, ``bwrap``):

- its own PID namespace (pid 2, parent pid 1: ``getppid()`` and ``/proc`` show nothing of
  eloledger; when the sandbox's init dies the kernel kills every process left, so a
  ``fork(); setsid(); fork()`` sleeper cannot outlive it), IPC and UTS namespaces, a new
  session (no terminal injection) and, unless ``network=True``, its own network namespace
  (no interface but a loopback of its own: 127.0.0.1 services of the host are out of reach);
- a uid that is not the caller's. As a normal user: ``--unshare-all --uid 65534``. As root, a
  user namespace would map the sandbox uid to host uid 0, and the kernel never enforces
  ``RLIMIT_NPROC`` for uid 0 (30 fork+setsid sleepers all survived); so as root bwrap runs in
  privileged mode (every namespace but the user one) and :mod:`.enter` drops to a fresh uid
  of its own (in [2**30, 2**31), no capability), for which every limit holds;
- a read-only view of the system (``/usr``, ``/bin``, ``/lib*``, ``/etc``) and of the Python
  prefix, a private size-limited ``/tmp`` (tmpfs), and only the folders passed as
  ``ro_dirs``/``rw_dirs``. ``$HOME``, the ledger, the spec, eloledger's state and other
  sandboxes' folders are simply not there, and eloledger's own package (its reference
  solutions) or source checkout is masked by an empty tmpfs wherever a bound folder holds it
  (installed into the system Python or the bound prefix);
- CPU, address-space, file-size and process limits (set inside, :mod:`.enter`), a wall-clock
  limit and an output cap enforced by the caller;
- one seccomp filter (:mod:`.seccomp`: no keyring, no ``ptrace``/``pidfd_getfd``/
  ``process_vm_*``, no new namespaces, no mounts), and, as a normal user, ``--disable-userns``
  too; ``nested_sandbox=True`` (an agent CLI that builds its own sandbox: Codex runs
  bubblewrap) keeps the keyring and process rules but allows its namespaces and mounts;
- one cap on every byte it can write: ``/``, ``/dev`` and ``/dev/shm`` are read-only, so the
  size-limited ``/tmp`` is all it can fill (and the ``rw_dirs`` it is given).

Where no sandbox can be made (no bwrap, e.g. macOS) :func:`resolve` raises a one-line
:class:`~eloledger.errors.UserError` naming the fix, unless the caller asked for ``"none"``
(``[judge] sandbox = "none"``), which runs the program as a plain limited subprocess and is
recorded as ``sandbox = "none"`` on every judged row.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eloledger.errors import UserError
from eloledger.sandbox import seccomp

__all__ = [
    "KINDS", "Limits", "Result", "chown_back", "collect", "command", "kill", "python", "resolve",
    "run", "spawn",
]  # fmt: skip

KINDS = ("auto", "bwrap", "none")
INSTALL_FIX = (
    "install bubblewrap (apt-get install bubblewrap / dnf install bubblewrap), or accept "
    'unsandboxed judging with [judge] sandbox = "none"'
)
ENTER = Path(__file__).with_name("enter.py")
_INSIDE_ENTER = "/.eloledger/enter.py"
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
# fresh uids for root mode: far above any account, below 2**31 (a nested bwrap, e.g. Codex's
# own sandbox, prints uids with %d and fails on larger ones: "setting up uid map")
_UID_LOW = 2**30


@dataclass(frozen=True)
class Limits:
    """Per-sandbox limits; ``memory_mb=None`` leaves the address space alone (node needs it)."""

    cpu_s: float = 10.0
    wall_s: float = 30.0
    memory_mb: int | None = 512
    nproc: int = 32
    file_mb: int = 16
    tmp_mb: int = 64
    output_bytes: int = 1 << 20


@dataclass
class Result:
    returncode: int | None  # None: killed at the wall-clock limit
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool  # stdout went past ``output_bytes`` (the program was killed)
    sandbox: str


Mount = Path | str | tuple[Path | str, str]


def resolve(requested: str = "auto") -> str:
    """The sandbox to use: ``bwrap``, or ``none`` only when asked for by name."""
    if requested == "none":
        return "none"
    no_filter = seccomp.available()
    if no_filter:
        fix = seccomp.MISSING_FIX + ', or accept unsandboxed judging with [judge] sandbox = "none"'
        raise UserError(f"cannot run untrusted code in a sandbox: {no_filter}", fix=fix)
    if _bwrap_works():
        return "bwrap"
    why = "bwrap is not installed" if shutil.which("bwrap") is None else _bwrap_works.error
    raise UserError(f"cannot run untrusted code in a sandbox: {why}", fix=INSTALL_FIX)


def python() -> str:
    """The real interpreter behind this one (a venv's python is a link into its base)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def command(
    argv: Sequence[str],
    *,
    rw_dirs: Iterable[Mount] = (),
    ro_dirs: Iterable[Mount] = (),
    limits: Limits = Limits(),
    network: bool = False,
    cwd: str | None = None,
    kind: str = "bwrap",
    nested_sandbox: bool = False,
    pass_fds: Sequence[int] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The command line that runs ``argv`` in a sandbox (for callers with their own process
    handling, e.g. asyncio). As root, ``rw_dirs`` are handed to the sandbox's fresh uid
    (:func:`chown_back` returns them). Paths inside are the host paths unless a ``(host,
    inside)`` pair says otherwise; ``cwd`` defaults to the first writable folder.

    The line starts with ``/bin/sh``, which opens the seccomp filter on a descriptor for
    ``bwrap --seccomp`` (a descriptor not in ``pass_fds``) and execs bwrap: a caller with its
    own process handling needs no descriptor of its own. With ``seccomp_fd`` (a descriptor on
    :func:`seccomp.path` that the caller passes to the child, as :func:`spawn` does) the line
    is bwrap itself."""
    rw = [_pair(m) for m in rw_dirs]
    ro = [_pair(m) for m in ro_dirs]
    uid = None
    if kind == "bwrap" and os.geteuid() == 0:
        uid = _UID_LOW + secrets.randbelow(2**30 - 1)
        for host, _ in rw:
            _chown_tree(host, uid)
    spec = {
        "uid": uid,
        "cpu_s": max(1, int(limits.cpu_s + 0.999)),
        "memory_mb": limits.memory_mb,
        "nproc": limits.nproc,
        "file_mb": limits.file_mb,
        "cwd": cwd or (rw[0][1] if rw else "/tmp"),
    }
    if kind != "bwrap":  # "none": a plain limited subprocess as the caller, shown loudly
        spec["uid"] = None
        return [python(), "-I", "-S", str(ENTER), json.dumps(spec), "--", *argv]
    inner = [python(), "-I", "-S", _INSIDE_ENTER, json.dumps(spec), "--", *argv]
    fd = seccomp_fd
    if fd is None:
        fd = next(n for n in range(9, 2, -1) if n not in pass_fds)  # sh redirects fds 0-9 only
    bwrap = _bwrap_argv(rw, ro, limits, network, privileged=uid is not None,
                        nested=nested_sandbox, seccomp_fd=fd)  # fmt: skip
    if seccomp_fd is not None:
        return [*bwrap, *inner]
    opener = f'exec "$@" {fd}<"$0"'
    return ["/bin/sh", "-c", opener, seccomp.path(nested_sandbox), *bwrap, *inner]


def spawn(
    argv: Sequence[str],
    *,
    rw_dirs: Iterable[Mount] = (),
    ro_dirs: Iterable[Mount] = (),
    limits: Limits = Limits(),
    network: bool = False,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    kind: str = "bwrap",
    nested_sandbox: bool = False,
    pass_fds: Sequence[int] = (),
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.PIPE,
    stderr: int | None = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` inside a sandbox (its own process group; :func:`kill` ends all of it)."""
    # the seccomp program on a descriptor of its own (bwrap reads it to the end, then closes it)
    filter_fd = os.open(seccomp.path(nested_sandbox), os.O_RDONLY) if kind == "bwrap" else None
    try:
        full = command(
            argv, rw_dirs=rw_dirs, ro_dirs=ro_dirs, limits=limits, network=network, cwd=cwd,
            kind=kind, nested_sandbox=nested_sandbox, pass_fds=pass_fds, seccomp_fd=filter_fd,
        )  # fmt: skip
        clean = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
        extra = () if filter_fd is None else (filter_fd,)
        return subprocess.Popen(
            full,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=clean if env is None else env,
            pass_fds=(*pass_fds, *extra),
            start_new_session=True,
            cwd="/" if kind == "bwrap" else (cwd or "/tmp"),
        )
    finally:
        if filter_fd is not None:
            os.close(filter_fd)


def run(
    argv: Sequence[str],
    rw_dirs: Iterable[Mount] = (),
    ro_dirs: Iterable[Mount] = (),
    limits: Limits = Limits(),
    network: bool = False,
    *,
    input: bytes = b"",
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    kind: str = "bwrap",
    nested_sandbox: bool = False,
) -> Result:
    """Run ``argv`` to its end inside a sandbox; stdout capped, killed at ``limits.wall_s``."""
    proc = spawn(
        argv, rw_dirs=rw_dirs, ro_dirs=ro_dirs, limits=limits, network=network, cwd=cwd,
        env=env, kind=kind, nested_sandbox=nested_sandbox, stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(input)
    proc.stdin.close()
    out, err, timed_out, truncated = collect(proc, limits)
    kill(proc)
    code = None if timed_out else proc.returncode
    return Result(code, bytes(out), bytes(err[:65536]), timed_out, truncated, kind)


def collect(
    proc: subprocess.Popen[bytes], limits: Limits
) -> tuple[bytearray, bytearray, bool, bool]:
    """(stdout, stderr, timed_out, truncated): read until both close or a limit is hit."""
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + limits.wall_s
    sel = selectors.DefaultSelector()
    for stream, sink in ((proc.stdout, out), (proc.stderr, err)):
        if stream is not None:
            sel.register(stream, selectors.EVENT_READ, sink)
    timed_out = truncated = False
    while sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(left):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            key.data.extend(chunk)
        if len(out) > limits.output_bytes:
            truncated = True
            del out[limits.output_bytes :]
            break
    sel.close()
    if not timed_out and not truncated:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    return out, err, timed_out, truncated


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the sandbox's process group; its PID namespace takes every process inside."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _pair(m: Mount) -> tuple[str, str]:
    if isinstance(m, tuple):
        return os.path.realpath(m[0]), m[1]
    real = os.path.realpath(m)
    return real, real


def _chown_tree(root: str, uid: int) -> None:
    """Give a writable folder to the sandbox's uid (root mode: it is nobody else's)."""
    os.chown(root, uid, uid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def chown_back(root: Path) -> None:
    """Hand a folder written inside a root-mode sandbox back to the caller."""
    if os.geteuid() == 0 and root.exists():
        _chown_tree(str(root), 0)


def _parents(path: str, made: set[str]) -> list[str]:
    """``--dir`` for each missing parent, mode 0755 (bwrap's default would be 0700)."""
    args: list[str] = []
    parts = Path(path).parts
    for i in range(2, len(parts)):
        parent = str(Path(*parts[:i]))
        if parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args


def _bwrap_argv(
    rw: list[tuple[str, str]],
    ro: list[tuple[str, str]],
    limits: Limits,
    network: bool,
    *,
    privileged: bool,
    nested: bool,
    seccomp_fd: int,
) -> list[str]:
    args = ["bwrap", "--die-with-parent", "--new-session", "--seccomp", str(seccomp_fd)]
    if privileged:  # root: no user namespace, enter.py drops to a fresh uid (see docstring)
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        if not network:
            args.append("--unshare-net")
    else:
        args += ["--unshare-all", "--uid", "65534", "--gid", "65534"]
        if not nested:  # no user namespace below ours (the filter says so too)
            args += ["--unshare-user", "--disable-userns"]
        if network:
            args.append("--share-net")
    made: set[str] = {"/"}
    for top in _SYSTEM:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
        made.add(top)
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    # one cap on every byte written: /dev (with /dev/shm) read-only, / too (at the end)
    args += ["--remount-ro", "/dev"]
    made |= {"/proc", "/dev", "/tmp"}
    prefix = os.path.realpath(sys.base_prefix)
    if not any(prefix == s or prefix.startswith(s + "/") for s in _SYSTEM):
        ro = [(prefix, prefix), *ro]
    args += _parents(_INSIDE_ENTER, made) + ["--ro-bind", str(ENTER), _INSIDE_ENTER]
    for host, inside in ro:
        args += _parents(inside, made) + ["--ro-bind", host, inside]
        made.add(inside)
    for host, inside in rw:
        args += _parents(inside, made) + ["--bind", host, inside]
        made.add(inside)
    if network:  # name resolution for a gateway by name
        args += ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
    tops = [(t, t) for t in _SYSTEM if not os.path.islink(t)]
    for hidden in _hidden_own_tree([*tops, *ro, *rw]):
        args += ["--size", "4096", "--tmpfs", hidden, "--remount-ro", hidden]
    return [*args, "--remount-ro", "/", "--"]


def _own_tree() -> str:
    """What of eloledger no sandbox may see: its package folder (reference solutions in
    ``data/tasks``), or the whole checkout (with its tests) when it runs from a source tree."""
    package = os.path.realpath(Path(__file__).parents[1])
    checkout = Path(package).parent.parent
    if Path(package).parent.name == "src" and (checkout / "pyproject.toml").is_file():
        return str(checkout)
    return package


def _hidden_own_tree(mounts: list[tuple[str, str]]) -> list[str]:
    """Where eloledger's own tree shows inside the sandbox (it lies under a bound folder, e.g.
    installed into the system Python or the bound prefix): each such place gets an empty,
    read-only tmpfs over it."""
    own = _own_tree()
    return [
        inside + own[len(host):].rstrip("/")
        for host, inside in mounts
        if own == host or own.startswith(host.rstrip("/") + "/")
    ]


@functools.cache
def _probe() -> str | None:
    """None when bwrap can make a sandbox here, else why not (one line)."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed"
    try:
        res = run([python(), "-I", "-S", "-c", "import os; print(os.getpid(), os.getuid())"],
                  limits=Limits(wall_s=20))  # fmt: skip
    except OSError as exc:
        return f"bwrap cannot start ({exc})"
    words = res.stdout.split()
    if res.returncode != 0 or len(words) != 2 or words[1] == b"0":
        text = res.stderr.decode("utf-8", "replace").strip().splitlines()
        return "bwrap fails here: " + (text[-1] if text else f"exit {res.returncode}")
    return None


class _Works:
    """``_bwrap_works()`` with the failure kept for the message."""

    error = ""

    def __call__(self) -> bool:
        why = _probe()
        self.error = why or ""
        return why is None


_bwrap_works = _Works()
