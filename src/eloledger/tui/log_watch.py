"""The Run view on live agent session logs (``eloledger watch --claude-code|--codex|--gemini-cli``).

A source like :class:`~eloledger.tui.sources.LedgerWatch`, fed by
:class:`~eloledger.agents.follow.AgentLogFollower` instead of a ledger. Each call becomes a row
whose "arm" is session + model, so the arms table shows spend per session and model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from eloledger.ledger.row import LedgerRow
from eloledger.runner.counters import RunCounters
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.sources import POLL_INTERVAL_S, LedgerWatch, _one_line

if TYPE_CHECKING:
    from eloledger.agents.follow import AgentLogFollower

LABELS = {"claude-code": "Claude Code", "codex": "Codex", "gemini-cli": "Gemini CLI"}


def display_row(row: LedgerRow) -> LedgerRow:
    """An imported row as the Run view groups it: arm = session + model, task = project."""
    session = str(row.get("session") or "?")
    project = str(row.get("project") or "")
    return msgspec.structs.replace(
        row, arm=f"{session[:8]} {row.get('model') or '?'}", task_id=Path(project).name or project
    )


class AgentLogWatch(LedgerWatch):
    """Polls the agent's log folders and folds each new call into the counters.

    The controls (pause, stop, the polling loop) are LedgerWatch's; only where rows come from
    and the detail line differ, so ``LedgerWatch.__init__`` (which opens a ledger) is not run.
    """

    follower: AgentLogFollower  # type: ignore[assignment]  # LedgerWatch's reads a ledger

    def __init__(
        self,
        kind: str,
        roots: Sequence[Path],
        *,
        from_start: bool = True,
        interval: float = POLL_INTERVAL_S,
        settle_s: float | None = None,
    ) -> None:
        from eloledger.agents.follow import SETTLE_S, AgentLogFollower

        self.kind = kind
        self.label = f"{LABELS.get(kind, kind)} logs: " + ", ".join(str(r) for r in roots)
        self.interval = interval
        self.counters = RunCounters()
        self.follower = AgentLogFollower(
            kind, roots, from_start=from_start, settle_s=SETTLE_S if settle_s is None else settle_s
        )
        self.calls_seen = 0
        self.paused = False
        self.last_error = ""
        self._stopped = False

    def state(self) -> str:
        return "paused" if self.paused else "following"

    async def load_plan(self) -> None:
        """Session logs have no spec beside them: nothing is planned, no budget."""

    def detail(self) -> str:
        report = self.follower.report
        parts = [f"{self.calls_seen:,} calls", f"{len(self.follower.scanner.files):,} files"]
        if report.unknown:
            parts.append(f"{sum(report.unknown.values())} unknown lines")
        if self.last_error:
            parts.append(self.last_error)
        return " · ".join(parts)

    async def poll_once(self) -> int:
        try:
            rows = await asyncio.to_thread(self.follower.poll)
        except Exception as exc:  # a bad file must not kill the viewer: show it, keep following
            self.last_error = _one_line(exc)
            return 0
        self.last_error = ""
        for row in rows:
            self.counters.apply_row(display_row(row))
        self.calls_seen += len(rows)
        return len(rows)


class LogWatchApp(EloLedgerApp):
    """The app on the Run tab with an :class:`AgentLogWatch` driven by a worker."""

    def __init__(self, source: AgentLogWatch, **kwargs: Any) -> None:
        super().__init__(source=source, **kwargs)
        self.log_source = source
        self.watch_mode = True

    def on_ready(self) -> None:
        self.run_worker(self.log_source.run(), name="watch", group="source", exclusive=True)


def run_log_watch(
    kind: str, roots: Sequence[Path], *, from_start: bool = True, theme: str | None = None
) -> int:
    """Open the app following ``kind``'s logs (blocking)."""
    app = LogWatchApp(AgentLogWatch(kind, roots, from_start=from_start), theme=theme)
    app.ends_with_input = True
    app.run()
    return int(app.return_code or 0)
