"""Slices of one file read at once: this process takes the first, fork workers the rest.

Why one place for it: when one slice fails (a line only the exact reader reads, rows out of
writing order), every slice's work is thrown away and the caller reads again. The other
slices must then stop at their next batch, not run to their end in the background beside
that second read, and the pool's threads must be gone before it starts (a process with
threads does not fork workers: :func:`eloledger.ledger.fastread._auto_workers`).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

# While slices are read: a byte in memory shared with the workers (inherited at fork), 1
# once a slice has failed. None otherwise, and then stop_if_told() does nothing.
_failed: Any = None


class SliceStopped(Exception):
    """This slice was told to stop: another one failed, and its error is the one raised."""


def stop_if_told() -> None:
    """Called by a slice's fold between batches: ends it once another slice has failed."""
    if _failed is not None and _failed.value:
        raise SliceStopped


def read_slices(read: Callable[[int, int], T], bounds: Sequence[tuple[int, int]]) -> list[T]:
    """``read(start, end)`` of every slice in ``bounds``, in order: the first in this process,
    the others in fork workers. If one raises, the others stop at their next batch and its
    error is raised here (the first slice's, if several failed); the workers are gone
    either way. ``read`` must be picklable (a module's function, or a partial of one)."""
    global _failed
    if len(bounds) == 1:
        return [read(*bounds[0])]
    context = multiprocessing.get_context("fork")
    _failed = context.RawValue("b", 0)
    try:
        with ProcessPoolExecutor(len(bounds) - 1, mp_context=context) as pool:
            futures = [pool.submit(_in_worker, read, a, b) for a, b in bounds[1:]]
            return _gather(read, bounds[0], futures)
    finally:
        _failed = None


def _gather(
    read: Callable[[int, int], T], first: tuple[int, int], futures: list[Future]
) -> list[T]:
    try:
        mine = read(*first)
    except SliceStopped:  # a worker failed: its error is raised below
        mine = None
    except BaseException:
        _failed.value = 1
        raise
    for future in futures:  # waits for every worker; the first real error wins
        error = future.exception()
        if error is not None and not isinstance(error, SliceStopped):
            raise error
    if mine is None:
        raise RuntimeError("a slice was stopped but no slice failed")
    return [mine, *(future.result() for future in futures)]


def _in_worker(read: Callable[[int, int], T], start: int, end: int) -> T:
    try:
        return read(start, end)
    except SliceStopped:
        raise
    except BaseException:
        _failed.value = 1  # the others stop at their next batch
        raise


__all__ = ["SliceStopped", "read_slices", "stop_if_told"]
