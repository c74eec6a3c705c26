"""A small fork-based pool for the importer: the parent works too, and IPC is one blob per child.

Why not ``multiprocessing.Pool``: on a 2-core machine its parent only waits while two workers
parse, every file's result crosses a pipe as its own message through a result thread, and the
module costs ~15 ms to import; measured, the pool spent 0.25 s of CPU to save 0.1 s of wall.
Here each child gets one contiguous share of the tasks (by weight, e.g. new bytes) in one
message and answers with one pickled list; the parent parses the first share itself
meanwhile and hands its results on as they come, so the caller can apply them in order.

Children are forked when the pool is made (the caller names the descriptors of its locks in
``child_closes``: a child closes them first, so no child ever keeps one held), wait on a pipe
for work, and exit on end-of-file; they never return into the caller's stack (``os._exit``). A child that fails or dies only costs time: its share is
done again in the parent.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_HEADER = struct.Struct("<Q")
# The parent's share relative to a child's: a child still pickles and sends its results when it
# is done parsing, so the parent parses a little more (measured on the bench's 115 MB, 2 cores).
PARENT_SHARE = 1.1


class ForkPool:
    """``workers`` processes in all: the parent and ``workers - 1`` forked children."""

    def __init__(self, workers: int, *, child_closes: Sequence[int] = ()) -> None:
        """``child_closes``: the caller's descriptors a child closes first (e.g. a lock)."""
        self._children: list[tuple[int, Any, Any]] = []  # pid, task writer, result reader
        self._child_closes = tuple(child_closes)
        try:
            for _ in range(max(1, workers - 1)):
                self._children.append(self._fork())
        except BaseException:
            self.close()
            raise

    def _fork(self) -> tuple[int, Any, Any]:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                for _, writer, reader in self._children:  # the other children's pipes
                    writer.close()
                    reader.close()
                os.close(task_w)
                os.close(result_r)
                for fd in self._child_closes:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                _serve(os.fdopen(task_r, "rb"), os.fdopen(result_w, "wb"))
                code = 0
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        return pid, os.fdopen(task_w, "wb"), os.fdopen(result_r, "rb")

    def apply(self, func: Callable[..., Any], args: Sequence[Any] = ()) -> Any:
        """``func(*args)`` in a child."""
        _, writer, reader = self._children[0]
        _send(writer, ("apply", func, tuple(args)))
        status, value = _receive(reader)
        if status != "ok":
            raise value
        return value

    def imap(
        self, func: Callable[[Any], Any], tasks: Sequence[Any], weights: Sequence[int]
    ) -> Iterator[Any]:
        """``func(task)`` for each task, yielded in task order (the first share computed here)."""
        shares = _shares(weights, len(self._children))
        sent = []
        for (_, writer, reader), (lo, hi) in zip(self._children, shares[1:], strict=True):
            try:
                _send(writer, ("map", func, list(tasks[lo:hi])))
                sent.append((reader, lo, hi))
            except OSError:  # a child that died: its share is done here
                sent.append((None, lo, hi))
        lo, hi = shares[0]
        for task in tasks[lo:hi]:
            yield func(task)
        for reader, lo, hi in sent:
            try:
                status, value = ("lost", None) if reader is None else _receive(reader)
            except (EOFError, OSError, pickle.UnpicklingError):
                status, value = "lost", None
            if status != "ok":
                value = [func(task) for task in tasks[lo:hi]]
            yield from value

    def close(self) -> None:
        """End-of-file to every child, then reap them (killed if one is stuck)."""
        children, self._children = self._children, []
        for _, writer, reader in children:
            with contextlib.suppress(OSError):
                writer.close()
            with contextlib.suppress(OSError):
                reader.close()
        deadline = time.monotonic() + 2.0
        for pid, _, _ in children:
            with contextlib.suppress(ChildProcessError):  # already reaped
                while os.waitpid(pid, os.WNOHANG) == (0, 0):
                    if time.monotonic() > deadline:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)  # our own child, by its pid
                        os.waitpid(pid, 0)
                        break
                    time.sleep(0.001)

    def __enter__(self) -> ForkPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _shares(weights: Sequence[int], children: int) -> list[tuple[int, int]]:
    """Contiguous [lo, hi) task ranges: the parent's first, then one per child, by weight."""
    total = sum(weights)
    parts = [PARENT_SHARE] + [1.0] * children
    bounds, at, acc = [], 0, 0
    goal = 0.0
    for part in parts[:-1]:
        goal += total * part / sum(parts)
        lo = at
        while at < len(weights) and acc + weights[at] / 2 <= goal:
            acc += weights[at]
            at += 1
        bounds.append((lo, at))
    bounds.append((at, len(weights)))
    return bounds


def _serve(tasks: Any, results: Any) -> None:
    """The child's loop: one message in, one answer out, until end-of-file."""
    while True:
        try:
            kind, func, args = _receive(tasks)
        except EOFError:
            return
        try:
            value = func(*args) if kind == "apply" else [func(task) for task in args]
            answer = ("ok", value)
        except Exception as exc:  # noqa: BLE001 - sent to the parent, which redoes the work
            answer = ("error", exc)
        try:
            _send(results, answer)
        except BrokenPipeError:
            return


def _send(fh: Any, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HEADER.pack(len(data)))
    fh.write(data)
    fh.flush()


def _receive(fh: Any) -> Any:
    head = fh.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(head)
    data = fh.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)
