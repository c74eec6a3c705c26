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
evidence folder, with the session's processes stopped meanwhile (:mod:`.freeze`) and through
directory descriptors (:mod:`eloledger.safetree`): nothing the agent does to its folder can make
a snapshot follow a link out of it or grow past the caps. A snapshot that trips a cap is
dropped and ends the session's snapshots (:attr:`Checkpointer.note` says why). Each snapshot's budget is the log's count read after the copy (what the work
in it cost at most). After the session every snapshot is judged like the final folder and
becomes one ``role = "checkpoint"`` row (see :func:`finalize`, the shared row contract).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from eloledger.agents.events import SessionState
from eloledger.judges.workdir import CAPS, SKIP
from eloledger.runner.freeze import frozen
from eloledger.safetree import Manifest, copy_tree, remove_tree

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
    pid: int | None = None  # the CLI's process, stopped with its descendants during a copy
    note: str | None = None  # why snapshots stopped early (a cap), for the session's row
    _next: float | None = None
    _due_after: int | None = None  # snapshot at the first event after this one
    _pending: bool = False
    _running: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1))
    _manifest: Manifest = field(default_factory=dict)
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
        self.pid = None  # the CLI has exited: its pid may be another process's by now
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
            try:
                self._step()
            except OSError as exc:  # the folder gone or unreadable: no more snapshots
                self.note = f"snapshots stopped: {exc}"

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
        if self.note is not None:
            return
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
        if self._due_after is not None and self.note is None:
            try:
                self._snapshot()
            except OSError as exc:
                self.note = f"snapshots stopped: {exc}"

    def _snapshot(self) -> None:
        self._due_after = None
        s = self.state
        t0 = time.perf_counter()
        index = len(self.marks)
        dst = self.folder / f"{index:02d}"
        previous = (self.marks[-1].path, self._manifest) if self.marks else None
        with frozen(self.pid):
            report = copy_tree(self.work, dst, skip=SKIP, caps=CAPS, previous=previous)
        if report.tripped is not None:
            remove_tree(dst)
            self.note = f"snapshot {index} stopped: the work folder has {report.tripped}"
            return
        self._manifest = report.manifest
        copy_s = time.perf_counter() - t0
        self.marks.append(
            Mark(index, dst, s.tokens, self.read_log_tokens(), s.turns, round(s.elapsed_s, 3),
                 copy_s, report.linked, report.files - report.linked)
        )  # fmt: skip


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
