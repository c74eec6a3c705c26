"""Checkpoints inside an agent session: snapshots of its work folder on a 1.5x budget grid.

An agent arm with ``checkpoints = "tokens" | "turns" | "seconds"`` gets a :class:`Checkpointer`
per session. The session's reader calls :meth:`Checkpointer.poke` after each event of the CLI's
stream (a plain counter bump: the stream reader never waits); a one-thread worker then reads the
session's cumulative tokens (the live stream's count, or the CLI's own session log when that is
higher: Codex shows no usage mid-session, Claude Code's stream only non-final usage), and when
the budget has crossed the next step of the grid (first step ``checkpoint_start``, default the
first turn's tokens / turn 1 / the first turn's second) it snapshots the folder at the next
event (so a tool call the crossing model call asked for has run). A snapshot hard-links the
files unchanged since the previous one and copies the changed ones, under the session's
evidence folder. Each snapshot's budget is the log's count read after the copy (what the work
in it cost at most). After the session every snapshot is judged like the final folder and
becomes one ``role = "checkpoint"`` row (see :func:`finalize`, the shared row contract).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from eloledger.agents.events import SessionState
from eloledger.judges.workdir import MAX_BYTES, MAX_FILES, SKIP

AXES = ("tokens", "turns", "seconds")
GRID = 1.5


@dataclass
class Mark:
    """One snapshot as taken: its folder and the session's counters at that moment."""

    index: int
    path: Path
    est_tokens: int  # the live count (stream estimate or log) when it was taken
    log_tokens: int | None  # the session log's exact count read after the copy
    turns: int
    seconds: float
    copy_s: float = 0.0
    linked: int = 0
    copied: int = 0


@dataclass
class Checkpointer:
    """Takes the snapshots of one session (see the module docstring)."""

    axis: str
    work: Path
    folder: Path  # <evidence>/checkpoints
    state: SessionState
    read_log_tokens: Callable[[], int | None] = lambda: None
    start: float | None = None
    marks: list[Mark] = field(default_factory=list)
    events: int = 0
    _next: float | None = None
    _due_after: int | None = None  # snapshot at the first event after this one
    _pending: bool = False
    _running: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1))
    _manifest: dict[str, tuple[int, int, Path]] = field(default_factory=dict)
    _first_turn_s: float | None = None

    def __post_init__(self) -> None:
        self._next = self.start if self.start else (1.0 if self.axis == "turns" else None)

    # ---------------------------------------------------------------- on the event loop
    def poke(self) -> None:
        """After each stream event: at most one check in flight, the rest coalesced."""
        self.events += 1
        with self._lock:
            self._pending = True
            if self._running:
                return
            self._running = True
        self._pool.submit(self._drain)

    async def ticker(self) -> None:
        """The seconds axis crosses steps between events too: a light 10 Hz poke."""
        while True:
            await asyncio.sleep(0.1)
            self.poke()

    async def finish(self) -> None:
        """The session ended: take a snapshot still due, then stop the worker."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool, self._flush)
        self._pool.shutdown(wait=True)

    # ---------------------------------------------------------------- in the worker
    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._running = False
                    return
                self._pending = False
            self._step()

    def _value(self, tokens: int) -> float:
        s = self.state
        if self.axis == "tokens":
            return float(tokens)
        if self.axis == "turns":
            return float(s.turns)
        if self._first_turn_s is None and s.turns >= 1:
            self._first_turn_s = s.elapsed_s
        return s.elapsed_s if self._first_turn_s is not None else 0.0

    def _tokens(self) -> int:
        logged = self.read_log_tokens() if self.axis == "tokens" else None
        return max(self.state.tokens, logged or 0)

    def _step(self) -> None:
        if self._due_after is not None and (
            self.events > self._due_after or self.axis == "seconds"
        ):
            self._snapshot()
        tokens = self._tokens()
        value = self._value(tokens)
        if value <= 0:
            return
        if self._next is None:
            self._next = value  # the default first step: the first turn's tokens (seconds)
        if value >= self._next and self._due_after is None:
            self._due_after = self.events
            while self._next <= value:
                self._next *= GRID
            if self.axis == "seconds":
                self._snapshot()

    def _flush(self) -> None:
        if self._due_after is not None:
            self._snapshot()

    def _snapshot(self) -> None:
        self._due_after = None
        s = self.state
        t0 = time.perf_counter()
        index = len(self.marks)
        dst = self.folder / f"{index:02d}"
        linked, copied = self._copy(dst)
        copy_s = time.perf_counter() - t0
        self.marks.append(
            Mark(index, dst, s.tokens, self.read_log_tokens(), s.turns, round(s.elapsed_s, 3),
                 copy_s, linked, copied)
        )  # fmt: skip

    def _copy(self, dst: Path) -> tuple[int, int]:
        """Hard links for files unchanged (size, mtime) since the last snapshot, copies of the
        rest; regular files only (no symlink is followed or kept), the judge's size caps."""
        root = os.path.realpath(self.work)
        manifest: dict[str, tuple[int, int, Path]] = {}
        linked = copied = size = 0
        for folder, dirs, names in os.walk(root, followlinks=False):
            dirs[:] = [
                d for d in dirs if d not in SKIP and not os.path.islink(os.path.join(folder, d))
            ]
            rel_dir = os.path.relpath(folder, root)
            (dst / rel_dir).mkdir(parents=True, exist_ok=True)
            for name in names:
                src = os.path.join(folder, name)
                try:
                    st = os.lstat(src)
                except OSError:
                    continue  # removed while we walked
                if not os.path.isfile(src) or os.path.islink(src):
                    continue
                if len(manifest) >= MAX_FILES or size + st.st_size > MAX_BYTES:
                    continue
                rel = os.path.normpath(os.path.join(rel_dir, name))
                target = dst / rel
                old = self._manifest.get(rel)
                try:
                    if old is not None and old[:2] == (st.st_size, st.st_mtime_ns):
                        os.link(old[2], target)
                        linked += 1
                    else:
                        shutil.copyfile(src, target, follow_symlinks=False)
                        copied += 1
                except OSError:
                    continue
                manifest[rel] = (st.st_size, st.st_mtime_ns, target)
                size += st.st_size
        self._manifest = manifest
        return linked, copied


@dataclass(frozen=True)
class Budget:
    tokens: int
    turns: int
    seconds: float


def finalize(
    marks: list[Mark],
    final_tokens: int,
    final_turns: int,
    final_seconds: float,
    log_total: int | None,
) -> list[tuple[Mark, Budget]]:
    """Each snapshot's budget on the session row's own scale, never past it.

    The log's count is exact per call; what the final report counts and the log does not (Claude
    Code's tool-less first call, sent before any work) is added to every snapshot. Snapshots
    are kept in order with strictly increasing token budgets below the final one (a snapshot no
    model call separates from the next, or from the end, is the same work: the later is kept)."""
    offset = max(0, final_tokens - log_total) if log_total is not None else 0
    out: list[tuple[Mark, Budget]] = []
    for mark in marks:
        raw = mark.log_tokens + offset if mark.log_tokens is not None else mark.est_tokens
        budget = Budget(min(raw, final_tokens), min(mark.turns, final_turns),
                        min(mark.seconds, final_seconds))  # fmt: skip
        while out and out[-1][1].tokens >= budget.tokens:
            out.pop()
        out.append((mark, budget))
    return [(m, b) for m, b in out if b.tokens < final_tokens]
