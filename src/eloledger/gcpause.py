"""Python's cyclic garbage collector paused while rows are built by the hundred thousand.

The readers and the per-arm folds build dicts and tuples by the million and make no cycles;
every few thousand new objects the collector walks them all again, and on 1M ledger rows
that walking was a fifth of ``elo --ledger`` (7.8 s, 6.3 s paused) and 7% of an import of
8,000 small sessions. Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside; the collector is on again after, if it was before (so a
    pause inside a pause, or in another thread, never leaves it off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
