"""Where the Run view's numbers come from: a live run, a followed ledger, or a fixed snapshot.

Each source owns a ``RunCounters``. A live run lets the runner bump it (per token: plain
attribute writes); a followed ledger folds new rows into it with ``apply_row``. Sources are
driven by Textual workers started by the app, so file reads and the run never block the UI.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eloledger.errors import warning_code
from eloledger.runner.counters import RunCounters

APPLY_CHUNK = 2000  # rows folded between yields to the event loop when catching up
POLL_INTERVAL_S = 0.25


class SnapshotSource:
    """Fixed counters (tests, snapshots, a finished run)."""

    def __init__(self, counters: RunCounters, *, label: str = "", state: str = "finished") -> None:
        self.counters = counters
        self.label = label
        self._state = state

    def state(self) -> str:
        return self._state

    def detail(self) -> str:
        return ""

    def can_pause(self) -> bool:
        return False

    def can_cancel(self) -> bool:
        return False

    def toggle_pause(self) -> None:
        pass

    def cancel(self) -> None:
        pass


class LedgerWatch:
    """Follows a ledger another process appends to; rebuilds counters from its rows.

    The follower reads by byte offset, keeps a torn last line until it is completed, and starts
    over when the file is truncated or replaced; then the counters start over too (otherwise the
    rows read again would be counted twice). Pausing stops reading (the file keeps growing;
    resuming catches up).

    What it says is what is known: "waiting" while the file does not exist,
    "not a ledger" when every line so far was skipped, the count of skipped lines, and "run
    finished" once the runner has written the comparisons file beside the ledger (its last act;
    ``on_finished`` gets that file). A spec beside the ledger that names it gives the budget and
    each arm's planned calls.
    """

    from_ledger = True  # the view knows a ledger cannot tell calls in flight

    def __init__(
        self,
        path: str | Path,
        *,
        from_start: bool = True,
        interval: float = POLL_INTERVAL_S,
        on_finished: Callable[[Path], None] | None = None,
    ) -> None:
        from eloledger.ledger.follow import LedgerFollower

        self.path = Path(path)
        self.label = str(path)
        # --from-end: the counters hold only what was written after attaching, so the view
        # labels them "since attach" and sets no bar against the whole run's plan
        self.counting_since = None if from_start else time.strftime("%H:%M:%S")
        self.interval = interval
        self.counters = RunCounters()
        self.follower = LedgerFollower(self.path, from_start=from_start)
        self.rows_seen = 0
        self.restarts = 0
        self.skipped = 0
        self.last_skipped = ""
        self.paused = False
        self.last_error = ""
        self.exists = self.path.exists()
        self.finished = False
        self.on_finished = on_finished
        self.spec_path: Path | None = None
        self.plan: dict[str, int] = {}
        self.budget_tokens: int | None = None
        self._warnings_read = 0
        self._comparisons_mtime: float | None = None
        self.polls = 0  # reads done; a run finished at the first one had ended before attach
        self._stopped = False

    def state(self) -> str:
        if not self.exists:
            return "waiting"
        if self.rows_seen == 0 and self.skipped:
            return "not a ledger"
        if self.paused:
            return "paused"
        return "run finished" if self.finished else "following"

    def detail(self) -> str:
        if not self.exists:
            return f"{self.path.name} does not exist yet (the run creates it)"
        parts = [f"{self.rows_seen:,} rows"]
        if self.counting_since:
            parts[0] += f" since attach at {self.counting_since}"
        if self.skipped:
            noun = "line" if self.skipped == 1 else "lines"
            parts.append(f"{self.skipped:,} {noun} skipped (last: {self.last_skipped})")
        if self.restarts:
            parts.append(f"file restarted ×{self.restarts}")
        if self.spec_path is not None:
            parts.append(f"spec {self.spec_path.name}")
        if self.last_error:
            parts.append(self.last_error)
        return " · ".join(parts)

    def can_pause(self) -> bool:
        return True

    def can_cancel(self) -> bool:
        return False

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        self.counters.paused = self.paused

    def cancel(self) -> None:
        pass

    def stop(self) -> None:
        self._stopped = True

    async def poll_once(self) -> int:
        """Read what is new (in a thread) and fold it in; returns rows applied."""
        self.exists = self.path.exists()
        try:
            rows = await asyncio.to_thread(self.follower.poll)
        except Exception as exc:  # a bad line must not kill the viewer: show it, keep following
            self.last_error = _one_line(exc)
            return 0
        if self._follower_restarted():
            self.restarts += 1
            self.counters = RunCounters()
            self._apply_plan()
            self.rows_seen = 0
            self.skipped = 0
            self.last_skipped = ""
        self._count_skipped()
        self.last_error = ""
        for start in range(0, len(rows), APPLY_CHUNK):
            for row in rows[start : start + APPLY_CHUNK]:
                self.counters.apply_row(row)
            self.rows_seen += min(APPLY_CHUNK, len(rows) - start)
            await asyncio.sleep(0)
        self.polls += 1
        self._check_finished()
        return len(rows)

    def _count_skipped(self) -> None:
        """The follower keeps a warning per unreadable line; count them and keep the last."""
        new = self.follower.warnings[self._warnings_read :]
        self._warnings_read = len(self.follower.warnings)
        for message in new:
            if warning_code(message) == "ledger.line_skipped":
                self.skipped += 1
                self.last_skipped = message[len("skipped ") :][:120]

    def _check_finished(self) -> None:
        """The comparisons file, written after the ledger's last row, marks the run's end."""
        comparisons = comparisons_beside(self.path)
        try:
            mtime = comparisons.stat().st_mtime
            finished = mtime >= self.path.stat().st_mtime
        except OSError:
            self.finished = False
            return
        self.finished = finished
        if finished and mtime != self._comparisons_mtime:
            self._comparisons_mtime = mtime
            if self.on_finished is not None:
                with contextlib.suppress(Exception):
                    self.on_finished(comparisons)

    def _follower_restarted(self) -> bool:
        """The follower reports restarts (truncated/replaced file) through a counter attribute."""
        count = getattr(self.follower, "restarts", None)
        if count is None:
            count = getattr(self.follower, "resets", 0)
        seen = getattr(self, "_follower_restarts", 0)
        self._follower_restarts = count
        return count > seen

    def _apply_plan(self) -> None:
        if self.budget_tokens:
            self.counters.budget_tokens = self.budget_tokens
        if self.counting_since:
            return  # calls before attach are not counted: a bar against the plan would lie
        for arm, planned in self.plan.items():
            self.counters.arm(arm).planned = planned

    async def load_plan(self) -> None:
        """Find the spec that writes this ledger (beside it) for the budget and planned calls."""
        found = await asyncio.to_thread(spec_plan, self.path)
        if found is not None:
            self.spec_path, self.budget_tokens, self.plan = found
            self._apply_plan()

    async def run(self) -> None:
        await self.load_plan()
        while not self._stopped:
            if not self.paused:
                await self.poll_once()
            await asyncio.sleep(self.interval)


def comparisons_beside(ledger: Path) -> Path:
    """Where the runner writes the comparisons of the run whose ledger this is."""
    from eloledger.runner.spec import _sibling  # the runner's one naming rule for run files

    return _sibling(ledger, ".comparisons.csv")


def spec_plan(ledger: Path, limit: int = 20) -> tuple[Path, int | None, dict[str, int]] | None:
    """A spec file beside the ledger whose ``ledger`` is this file (or one shard's ledger of
    it): (path, budget, plan).

    The plan is the runner's own (``runner.progress.planned_calls``: rounds and shards
    included), so the watcher's total is the runner's number of calls. Specs that do not
    parse, or that write elsewhere, are passed over (this is a hint, never an error).
    """
    try:
        from eloledger.runner.progress import planned_calls
        from eloledger.runner.run import resolve_tasks
        from eloledger.runner.spec import load_spec
    except ImportError:
        return None
    target = ledger.resolve()
    for candidate in sorted(ledger.parent.glob("*.toml"))[:limit]:
        try:
            spec = load_spec(candidate)
            found, shard = _ledger_shard(Path(spec.ledger), target)
            if not found:
                continue
            plan = planned_calls(spec, len(resolve_tasks(spec)), shard)
        except Exception:
            continue
        return candidate, spec.max_total_tokens, plan
    return None


def _ledger_shard(written: Path, target: Path) -> tuple[bool, Any]:
    """Whether a spec writing ``written`` writes ``target``: the whole run's ledger (no
    shard) or the ledger of one ``--shard I/N`` slice of it (that shard)."""
    from eloledger.runner.shard import Shard, shard_ledger

    if written.resolve() == target:
        return True, None
    match = re.search(r"\.shard-(\d+)-of-(\d+)", target.name)
    if match:
        shard = Shard(int(match.group(1)), int(match.group(2)))
        if shard_ledger(written, shard).resolve() == target:
            return True, shard
    return False, None


class LiveRun:
    """Runs an experiment spec in the app's event loop (a Textual worker) with pause/cancel."""

    def __init__(
        self,
        spec: Any,
        *,
        label: str = "",
        resume: bool = False,
        on_done: Callable[[Any], None] | None = None,
    ) -> None:
        self.spec = spec
        self.resume = resume
        ledger = getattr(spec, "ledger", None)
        name = str(getattr(spec, "name", "") or "run")
        self.label = label or (f"{name} → {Path(ledger).name}" if ledger else name)
        self.counters = RunCounters()
        self.pause_event = asyncio.Event()
        self.cancel_event = asyncio.Event()
        self.result: Any = None
        self.error = ""
        self.on_done = on_done
        self._state = "idle"
        self.demo = is_demo_spec(spec)  # the demo cannot be resumed: cancel offers a re-run
        self.index_warning: str | None = None  # the run index could not be written (why)

    def state(self) -> str:
        if self._state == "running":
            if self.cancel_event.is_set():
                return "cancelling"
            if self.pause_event.is_set():
                return "paused"
        return self._state

    def detail(self) -> str:
        return self.error

    def can_pause(self) -> bool:
        return self._state == "running" and not self.cancel_event.is_set()

    def can_cancel(self) -> bool:
        return self._state == "running" and not self.cancel_event.is_set()

    def toggle_pause(self) -> None:
        if self.pause_event.is_set():
            self.pause_event.clear()
        else:
            self.pause_event.set()
        self.counters.paused = self.pause_event.is_set()

    def cancel(self) -> None:
        self.pause_event.clear()
        self.cancel_event.set()

    async def run(self) -> Any:
        from eloledger.runner.run import run_experiment

        self._state = "running"
        try:
            self.result = await run_experiment(
                self.spec,
                counters=self.counters,
                pause=self.pause_event,
                cancel=self.cancel_event,
                resume=self.resume,
            )
        except Exception as exc:
            self._state = "failed"
            self.error = _one_line(exc)
            raise
        finally:
            self.counters.finished = True
            self.counters.in_flight = 0
        stopped = getattr(self.result, "stopped", "")
        self._state = "cancelled" if self.cancel_event.is_set() else "finished"
        if stopped == "budget":
            self._state = "stopped: budget"
        if self._state != "cancelled":  # as `eloledger run`/`demo` do: one line in the index
            from eloledger.history import record_run

            self.index_warning = await asyncio.to_thread(record_run, self.result, self.spec)
        if self.on_done is not None:
            with contextlib.suppress(Exception):
                self.on_done(self.result)
        return self.result


def is_demo_spec(spec: Any) -> bool:
    """The built-in demo (a fresh folder each run, so ``--resume`` has nothing to resume)."""
    path = getattr(spec, "path", None)
    if path is None:
        return False
    from eloledger.runner.demo import demo_spec_path

    try:
        return Path(path).resolve() == demo_spec_path().resolve()
    except OSError:
        return False


def _one_line(exc: BaseException) -> str:
    from eloledger.redact import scrub

    text = getattr(exc, "one_line", None)
    message = text() if callable(text) else f"{type(exc).__name__}: {exc}"
    return scrub(" ".join(str(message).split()))[:200]
