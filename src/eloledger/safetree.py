"""Copy or remove a folder that an untrusted process may still be writing, without leaving it.

Why: an agent's work folder and HOME are written by code eloledger does not trust, and that
code can keep swapping a folder for a symlink (``renameat2(RENAME_EXCHANGE)`` in a loop) while
eloledger walks it. A walk by path names (``os.walk``, ``shutil.copytree``, ``Path.rglob``) can
be steered out of the folder between a check and an open, onto a host key or
``/proc/self/environ``. Here every step goes through a directory file descriptor:

* each folder is opened by its one-component name relative to its parent's descriptor with
  ``O_NOFOLLOW | O_DIRECTORY``: a name swapped for a symlink fails to open (``ELOOP`` /
  ``ENOTDIR``) instead of being followed, so the walk never leaves the tree it started in;
* a file is opened the same way with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO or device never
  blocks) and copied only when ``fstat`` on that descriptor says it is a regular file on the
  root's own file system; symlinks, FIFOs, sockets and devices are never copied or kept;
* bytes are counted as they are copied (``/proc/self/pagemap`` has ``st_size`` 0 and 256 GB
  of content): the walk stops at the byte cap, and at caps on files, folders, depth and names
  listed; an explicit stack, no recursion (a 1200-deep tree is a cap, not a RecursionError);
* copies get eloledger's private modes: 0600 files, 0700 folders.

A walk that trips a cap stops and says which (:attr:`CopyReport.tripped`): the caller fails
that one session with that note, never the run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_OUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20
FILE_MODE, DIR_MODE = 0o600, 0o700
LEFT_OUT_KEEP = 50  # names of left-out entries kept for the report


@dataclass(frozen=True)
class Caps:
    """How much one copy may take; the first one crossed stops it (see :class:`CopyReport`)."""

    files: int = 20_000
    bytes: int = 256 << 20
    folders: int = 5_000
    depth: int = 32  # two descriptors per level stay open while the walk is below it
    entries: int = 100_000  # names listed, copied or not (symlinks, FIFOs, skipped files)


# (inode, size, mtime, ctime) of each copied file by its path in the copy: a later snapshot
# hard-links a file whose four are unchanged (the agent can set mtime, never ctime).
Manifest = dict[str, tuple[int, int, int, int]]


@dataclass
class CopyReport:
    files: int = 0
    folders: int = 0
    bytes: int = 0
    entries: int = 0
    linked: int = 0  # files hard-linked from the previous copy instead of copied
    left_out: list[str] = field(default_factory=list)  # the first LEFT_OUT_KEEP, with why
    tripped: str | None = None  # the cap that stopped the copy, in words
    manifest: Manifest = field(default_factory=dict)
    modes: tuple[int, int] = (FILE_MODE, DIR_MODE)  # of the files and folders made

    def leave(self, rel: str, why: str) -> None:
        if len(self.left_out) < LEFT_OUT_KEEP:
            self.left_out.append(f"{rel} ({why})")


class _Tripped(Exception):
    pass


@dataclass
class _Frame:
    src: int
    dst: int
    rel: str
    depth: int
    names: list[tuple[str, bool]]  # (name, is a folder by its directory entry), popped


def copy_tree(
    src: Path,
    dst: Path,
    *,
    skip: frozenset[str] = frozenset(),
    caps: Caps = Caps(),
    only: Sequence[str] = ("",),
    previous: tuple[Path, Manifest] | None = None,
    readable: bool = False,
) -> CopyReport:
    """Copy the regular files and folders of ``src`` into ``dst`` (made 0700) as described in
    the module docstring; folders named in ``skip`` are left out. ``only`` limits the copy to
    those sub-folders of ``src`` (each opened component by component, never through a
    symlink; a missing one is no error). ``previous`` = (an earlier copy, its manifest): its
    unchanged files are hard-linked instead of copied. ``readable``: 0644/0755 instead of the
    private modes, for a throwaway copy a sandbox's own uid must read."""
    report = CopyReport(modes=(0o644, 0o755) if readable else (FILE_MODE, DIR_MODE))
    for folder in [*reversed(dst.parents), dst]:  # the missing ones in the copy's mode
        if not folder.is_dir():
            folder.mkdir(mode=report.modes[1], exist_ok=True)
    root = os.open(src, _DIR_FLAGS)
    out = os.open(dst, _DIR_FLAGS)
    prev = os.open(previous[0], _DIR_FLAGS) if previous is not None else None
    try:
        walk = _Walk(os.fstat(root).st_dev, caps, report, skip, prev, previous[1] if previous else {})
        for sub in only:
            parts = [p for p in sub.split("/") if p]
            try:
                with _descend(root, out, parts, report) as (s, d):
                    if s is not None and d is not None:
                        walk.run(s, d, "/".join(parts), len(parts))
            except _Tripped:
                break
    finally:
        for fd in (root, out, prev):
            if fd is not None:
                os.close(fd)
    return report


@contextlib.contextmanager
def _descend(
    root: int, out: int, parts: list[str], report: CopyReport
) -> Iterator[tuple[int | None, int | None]]:
    """Descriptors of ``parts`` below both roots (made in the copy), or (None, None)."""
    opened: list[int] = []
    s, d = root, out
    try:
        for part in parts:
            try:
                s = _open_dir(part, s)
            except OSError:
                yield None, None
                return
            opened.append(s)
            d = _make_dir(part, d, report.modes[1])
            opened.append(d)
        yield (os.dup(s), os.dup(d))
    finally:
        for fd in opened:
            os.close(fd)


@dataclass
class _Walk:
    """One copy's walk: what it may take, what it did, and the earlier copy it links from."""

    dev: int  # the root's file system: nothing on another is copied
    caps: Caps
    report: CopyReport
    skip: frozenset[str]
    prev: int | None  # the earlier copy's root, for hard links
    old: Manifest
    listed: int = 0  # folders seen in the listings so far (each one is to be copied)

    def run(self, src: int, dst: int, rel: str, depth: int) -> None:
        """Depth first with an explicit stack; owns (and closes) ``src`` and ``dst``."""
        stack = [self._frame(src, dst, rel, depth)]
        try:
            while stack:
                top = stack[-1]
                if not top.names:
                    stack.pop()
                    os.close(top.src)
                    os.close(top.dst)
                    continue
                name, is_dir = top.names.pop()
                path = f"{top.rel}/{name}" if top.rel else name
                if is_dir and name in self.skip:
                    continue
                fd = None if is_dir else self._copy_file(top, name, path)
                if is_dir or fd is not None:  # fd: a file entry that is a folder by now
                    child = self._enter(top, name, path, fd)
                    if child is not None:
                        stack.append(child)
        finally:
            for frame in stack:
                os.close(frame.src)
                os.close(frame.dst)

    def _frame(self, src: int, dst: int, rel: str, depth: int) -> _Frame:
        """A folder's frame: its names listed (``src`` and ``dst`` closed if that fails)."""
        try:
            return _Frame(src, dst, rel, depth, self._list(src))
        except BaseException:
            os.close(src)
            os.close(dst)
            raise

    def _list(self, fd: int) -> list[tuple[str, bool]]:
        """A folder's names, sorted in reverse (popped from the end: in order)."""
        names: list[tuple[str, bool]] = []
        report, limit, folders = self.report, self.caps.entries, self.caps.folders
        with os.scandir(fd) as entries:
            for entry in entries:
                report.entries += 1
                if report.entries > limit:
                    _trip(report, f"more than {limit:,} names")
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir and entry.name not in self.skip:
                    # counted when listed, not when made: a folder of 20,000 empty folders
                    # trips here, before thousands are made in the copy only to be removed
                    self.listed += 1
                    if self.listed > folders:
                        _trip(report, f"more than {folders:,} folders")
                names.append((entry.name, is_dir))
        names.sort(reverse=True)
        return names

    def _enter(self, top: _Frame, name: str, path: str, fd: int | None) -> _Frame | None:
        """The frame of a sub-folder (``fd``: already open, a file entry that became one)."""
        caps, report = self.caps, self.report
        if top.depth + 1 > caps.depth:
            if fd is not None:
                os.close(fd)
            _trip(report, f"folders more than {caps.depth} deep")
        report.folders += 1
        if report.folders > caps.folders:
            if fd is not None:
                os.close(fd)
            _trip(report, f"more than {caps.folders:,} folders")
        if fd is None:
            try:
                fd = _open_dir(name, top.src)
            except OSError:
                report.leave(path, "changed while copied: not a folder any more")
                return None
        try:
            if os.fstat(fd).st_dev != self.dev:
                report.leave(path, "another file system")
                os.close(fd)
                return None
            out = _make_dir(name, top.dst, report.modes[1])
        except BaseException:
            os.close(fd)
            raise
        return self._frame(fd, out, path, top.depth + 1)

    def _copy_file(self, top: _Frame, name: str, path: str) -> int | None:
        """Copy one file; a descriptor of it when it is a folder by now (then left open)."""
        report = self.report
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=top.src)
        except OSError:
            report.leave(path, "symlink, or not a regular file")  # ELOOP, ENXIO (socket), ...
            return None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                fd, folder = -1, fd
                return folder
            if not stat.S_ISREG(st.st_mode) or st.st_dev != self.dev:
                report.leave(path, "not a regular file of this folder's file system")
                return None
            report.files += 1
            if report.files > self.caps.files:
                _trip(report, f"more than {self.caps.files:,} files")
            key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            unchanged = self.prev is not None and self.old.get(path) == key
            if unchanged and report.bytes + st.st_size > self.caps.bytes:
                self._over()  # linked, it would count its whole size
            if unchanged and _link(self.prev, path, name, top.dst):  # type: ignore[arg-type]
                report.linked += 1
                report.bytes += st.st_size
            else:
                try:
                    self._copy_bytes(fd, name, top.dst)
                except OSError as exc:  # unreadable (EIO), or a name met twice: left out
                    report.leave(path, exc.strerror or "cannot be copied")
                    return None
            report.manifest[path] = key
            return None
        finally:
            if fd >= 0:
                os.close(fd)

    def _copy_bytes(self, fd: int, name: str, dst: int) -> None:
        """Read in chunks and count what is read: never past the byte cap, whatever the size."""
        out = os.open(name, _OUT_FLAGS, self.report.modes[0], dir_fd=dst)
        try:
            while True:
                room = self.caps.bytes - self.report.bytes
                chunk = os.read(fd, min(CHUNK, room) if room > 0 else 1)
                if not chunk:
                    return
                if room <= 0:  # one byte more than the cap allows: stop, that byte unwritten
                    self._over()
                self.report.bytes += len(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
        finally:
            os.close(out)

    def _over(self) -> None:
        _trip(self.report, f"more than {self.caps.bytes:,} bytes")


def _link(prev: int, path: str, name: str, dst: int) -> bool:
    try:
        os.link(path, name, src_dir_fd=prev, dst_dir_fd=dst, follow_symlinks=False)
    except OSError:
        return False
    return True


def _open_dir(name: str, parent: int) -> int:
    if not name or name in (".", "..") or "/" in name:
        raise OSError(errno.EINVAL, "not one path component", name)
    return os.open(name, _DIR_FLAGS, dir_fd=parent)


def _make_dir(name: str, parent: int, mode: int) -> int:
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, mode, dir_fd=parent)
    return _open_dir(name, parent)


def _trip(report: CopyReport, why: str) -> None:
    report.tripped = why
    raise _Tripped(why)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it, however deep or wide; never follows a symlink
    (a symlink inside is removed, not its target). No recursion, a bounded number of open
    descriptors: a folder deeper than ``_MOVE_UP_DEPTH`` is first moved up to the top folder.
    Best effort: what cannot be removed is left, nothing is raised."""
    try:
        parent = os.open(path.parent, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError:
        return
    try:
        try:
            top = _open_dir(path.name, parent)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(path.name, dir_fd=parent)  # a file or a symlink
            return
        with contextlib.suppress(OSError):
            _empty(top)
        with contextlib.suppress(OSError):
            os.rmdir(path.name, dir_fd=parent)
    finally:
        os.close(parent)


_MOVE_UP_DEPTH = 64


def _empty(top: int) -> None:
    """Empty the folder open as ``top`` (closes it)."""
    stack: list[_Gone] = [_Gone(top, "")]
    moved = 0
    try:
        while stack:
            here = stack[-1]
            if not here.todo:
                here.scans += 1
                if here.scans > _RESCANS + (moved if here.fd == top else 0):
                    return  # a writer keeps adding folders: give up, never loop forever
                # first, or what appeared meanwhile (moved up); the empty ones go at once
                here.todo = _rmdir_empty(here.fd, _clear(here.fd))
            if not here.todo:
                stack.pop()
                os.close(here.fd)
                if stack:
                    try:
                        os.rmdir(here.name, dir_fd=stack[-1].fd)
                    except OSError:
                        return  # not empty after all (a writer still at work): give up
                continue
            child = here.todo.pop()
            if len(stack) >= _MOVE_UP_DEPTH:  # too deep: move it up beside the others
                moved += 1
                up = f".eloledger-rm-{moved}-{secrets.token_hex(6)}"
                with contextlib.suppress(OSError):
                    os.rename(child, up, src_dir_fd=here.fd, dst_dir_fd=top)
                continue
            try:
                opened = _open_dir(child, here.fd)
            except OSError:
                _chmod_open(child, here.fd)
                try:
                    opened = _open_dir(child, here.fd)
                except OSError:
                    return  # cannot be opened even as its owner: left where it is
            stack.append(_Gone(opened, child))
    finally:
        for gone in stack:
            os.close(gone.fd)


_RESCANS = 3  # listings of one folder while removing it (the top: one more per folder moved up)


@dataclass
class _Gone:
    """A folder being removed: its descriptor, its name above, its sub-folders still to go."""

    fd: int
    name: str
    todo: list[str] = field(default_factory=list)
    scans: int = 0


def _clear(fd: int) -> list[str]:
    """Unlink what is not a folder; the names of the folders (one listing: a rescan from the
    start after each removal was quadratic in a wide folder). The folder is made 0700 first:
    its owner may have made it read-only (0500), which keeps even its owner from unlinking."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, DIR_MODE)
    folders = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.name, dir_fd=fd)
    return folders


def _rmdir_empty(fd: int, names: list[str]) -> list[str]:
    """Remove the empty folders among ``names`` (folders of ``fd``); the names left, to be
    emptied first. Many are removed by several threads at once: each ``rmdir`` mostly waits
    on the file system's journal (2-4 ms on a busy disk mounted with ``discard``), and
    waiting together made 3,000 of them 8-13x quicker (bench/bench_wide_folders.py)."""

    def gone(name: str) -> bool:
        try:
            os.rmdir(name, dir_fd=fd)  # never follows a symlink (ENOTDIR)
        except OSError:
            return False
        return True

    if len(names) < _WIDE:
        return [name for name in names if not gone(name)]
    with ThreadPoolExecutor(_THREADS) as pool:
        removed = list(pool.map(gone, names, chunksize=32))
    return [name for name, done in zip(names, removed, strict=True) if not done]


_WIDE, _THREADS = 64, 8


def _chmod_open(name: str, parent: int) -> None:
    """A folder its owner made unreadable (0000) is made 0700 again (best effort). Opened
    with ``O_PATH | O_NOFOLLOW | O_DIRECTORY`` (no read right needed, never a symlink) and
    changed through its ``/proc/self/fd`` entry: a chmod by name would follow a symlink
    swapped in its place."""
    path_flag = getattr(os, "O_PATH", 0)
    if not path_flag:
        return
    try:
        fd = os.open(name, path_flag | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.chmod(f"/proc/self/fd/{fd}", DIR_MODE)
    finally:
        os.close(fd)
