"""The Run view: live counters of a run (or of a followed ledger), pulled on a timer.

Nothing here is called per token. A :class:`RunSource` owns a ``RunCounters`` that producers
bump; the view reads it ten times a second inside ``batch_update()`` and redraws only text that
changed: one summary ``Static`` (updated only when its text differs), one Line-API list for the
arms and one for the requests. Latency percentiles are recomputed at 2 Hz.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import numpy as np
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from eloledger.runner.counters import ArmCounters, RequestLine, RunCounters
from eloledger.tui import fmt
from eloledger.tui.agent_sessions import sync_agent_sessions
from eloledger.tui.line_list import Cells, LineList

NUMBERS_HZ = 10
PERCENTILE_HZ = 2
PLOT_HZ = 1
PLOT_POINTS = 120  # two minutes of tokens/s history
PLOT_MIN_HEIGHT = 26  # the sparkline shows only when the view has room for it
RATE_WINDOW_S = 3.0
LIVE_STATES = ("running", "paused", "cancelling")  # a run going: no second one starts
ARM_NAME_W = 20  # fixed columns: the heading above a list lines up whatever the width
TASK_W = 20


class RunSource(Protocol):
    """What the view needs from a live run or a followed ledger."""

    counters: RunCounters
    label: str  # e.g. the spec name or the ledger path

    def state(
        self,
    ) -> str: ...  # idle | running | paused | cancelling | finished | following | failed

    def detail(self) -> str: ...  # one short line: offset, warnings, last error

    def can_pause(self) -> bool: ...

    def can_cancel(self) -> bool: ...

    def toggle_pause(self) -> None: ...

    def cancel(self) -> None: ...


def arm_cells(arm: ArmCounters, width: int, name_w: int = ARM_NAME_W) -> Cells:
    """name, progress bar, done/planned, ok, errors, tokens, streaming estimate."""
    fraction = arm.done / arm.planned if arm.planned else None
    done = f"{arm.done:,}/{arm.planned:,}" if arm.planned else f"{arm.done:,}"
    return [
        (fmt.fit(arm.name, name_w) + " ", "line-list--accent"),
        (fmt.gauge(fraction, 12) + " ", "line-list--ok" if fraction == 1.0 else ""),
        (done.rjust(9) + " ", ""),
        (str(arm.ok).rjust(6) + " ", "line-list--ok" if arm.ok else "line-list--dim"),
        (str(arm.errors).rjust(5) + " ", "line-list--error" if arm.errors else "line-list--dim"),
        (fmt.compact(arm.total_tokens).rjust(9) + " ", ""),
        (
            ("+" + fmt.compact(arm.estimated_tokens)) if arm.estimated_tokens else "",
            "line-list--dim",
        ),
    ]


def column_widths(arms: list[str], tasks: list[str], width: int) -> tuple[int, int, int]:
    """(arm list name, request arm, request task) widths: long arm names get the room an
    empty or short task column leaves, so names are cut only when the screen is full."""
    longest_arm = max((len(a) for a in arms), default=3)
    longest_task = max((len(t) for t in tasks), default=0)
    task_w = max(4, min(TASK_W, longest_task))
    spare = max(0, width - 2 - (7 + 1 + task_w + 1 + 5 + 8 + 8 + 11))  # the other columns
    request_arm = max(8, min(longest_arm, spare, 40))
    arm_spare = max(0, width - 2 - (13 + 10 + 7 + 6 + 10 + 7))
    list_arm = max(8, min(longest_arm, arm_spare, 40))
    return list_arm, request_arm, task_w


def arm_key(arm: ArmCounters) -> tuple:
    return (
        arm.name,
        arm.planned,
        arm.done,
        arm.ok,
        arm.errors,
        arm.total_tokens,
        arm.estimated_tokens,
    )


ARM_HEADER = ("arm", "progress", "done", "ok", "err", "tokens", "stream")

_STATUS_CLASS = {"ok": "line-list--ok", "error": "line-list--error", "retry": "line-list--warn"}


def request_cells(req: RequestLine, width: int, arm_w: int = 16, task_w: int = TASK_W) -> Cells:
    """status, arm, task, sample, tokens, latency, error class."""
    return [
        (fmt.fit(req.status, 7), _STATUS_CLASS.get(req.status, "line-list--dim")),
        (fmt.fit(req.arm, arm_w) + " ", "line-list--accent"),
        (fmt.fit(req.task_id, task_w) + " ", ""),
        (f"#{req.sample}".rjust(4) + " ", "line-list--dim"),
        (fmt.compact(req.tokens).rjust(7) + " ", ""),
        (fmt.millis(req.latency_ms).rjust(7) + " ", ""),
        (req.error_class or "", "line-list--error"),
    ]


def request_key(req: RequestLine) -> tuple:
    return (
        req.status,
        req.arm,
        req.task_id,
        req.sample,
        req.tokens,
        req.latency_ms,
        req.error_class,
    )


def requests_seen(counters: RunCounters) -> int:
    """How many request lines were ever appended (the ring buffer forgets old ones)."""
    explicit = getattr(counters, "requests_total", None)
    if isinstance(explicit, int):
        return explicit
    return sum(a.done for a in counters.arms.values()) + counters.retries


def usage_lines(c: RunCounters, width: int = 78) -> list[str]:
    """The Usage line; when calls carry no server usage, a loud warning that names the arms,
    says whose numbers the tokens are and how to fix it (each line fits ``width``)."""
    missing = [f"MISSING {fmt.count(c.usage_missing_calls)}"] if c.usage_missing_calls else []
    streaming = f"streaming +{fmt.count(c.estimated_tokens)} tok"
    line = fmt.fit_parts(
        "[b]Usage[/b]   ",
        [
            f"server-reported {fmt.count(c.server_reported_calls)} calls",
            f"estimated {fmt.count(c.estimated_calls)} calls",
            streaming,
        ],
        width,
    )
    if not c.estimated_calls and not c.usage_missing_calls:
        return [line]
    arms = ", ".join(
        f"{a.name} ({a.usage_estimated_calls + a.usage_missing_calls})"
        for a in c.arms.values()
        if a.usage_estimated_calls or a.usage_missing_calls
    )
    head = (
        "⚠ tokens are eloledger's ESTIMATE (gateway sent no usage): "
        if c.estimated_calls
        else "⚠ ZERO usage (the gateway sent none; not free calls): "
    )
    loud = [
        f"[b $warning]ESTIMATED {fmt.count(c.estimated_calls)} calls[/]",
        *(f"[b $warning]{part}[/]" for part in missing),
        f"[b $warning]server-reported {fmt.count(c.server_reported_calls)} calls[/]",
        f"[b $warning]{streaming}[/]",
    ]
    return [
        fmt.fit_parts("[b $warning]Usage[/]   ", loud, width),
        f"[b $warning]{fmt.markup(fmt.fit(head + arms, width).rstrip())}[/]",
        fmt.fit_parts(
            "", ["[$warning]  fix: no usage on streams; 'eloledger doctor' explains it[/]",
                 "[$warning](include_usage)[/]"], width, sep=" ",
        ),
    ]


def cancel_words(source: RunSource) -> tuple[str, str]:
    """What is cancelled and how to carry on: the demo cannot be resumed (each run has a
    fresh folder), so it offers running it again; a spec run offers ``--resume``."""
    if getattr(source, "demo", False):
        return "demo", "ctrl+r runs the demo again (a new run, from the start)"
    spec = getattr(getattr(source, "spec", None), "path", None)
    command = f"eloledger run {spec} --resume" if spec else "eloledger run SPEC --resume"
    return "run", f"'{command}' completes the run later"


class ActiveTimer:
    """Elapsed run time that stands still while paused and stops when the run has ended."""

    def __init__(self) -> None:
        self.paused_total = 0.0
        self.paused_since: float | None = None
        self.ended_at: float | None = None

    def elapsed(self, now: float, started: float, state: str) -> float:
        if state == "paused":
            if self.paused_since is None:
                self.paused_since = now
        elif self.paused_since is not None:
            self.paused_total += now - self.paused_since
            self.paused_since = None
        if state in ("running", "following", "paused", "cancelling"):
            self.ended_at = None
        elif self.ended_at is None:
            self.ended_at = now
        end = self.paused_since or self.ended_at or now
        return max(0.0, end - started - self.paused_total)


class RunView(Vertical, can_focus=True):
    """Summary numbers, the arms and the request list of one :class:`RunSource`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run_demo", "Demo run"),  # the app's key, shown here when idle
        Binding("p", "toggle_pause", "Pause/resume"),
        Binding("p", "pause_view", "Pause view"),  # a followed ledger: the run goes on
        Binding("x", "cancel_run", "Cancel run"),
        Binding("f", "follow", "Follow tail"),
        Binding("o", "open_spec", "Open spec"),
        Binding("w", "watch_ledger", "Watch"),
    ]
    DEFAULT_CSS = """
    RunView { height: 1fr; }
    RunView #run-summary { height: auto; padding: 0 1; }
    RunView .run-heading { height: 1; color: $text-muted; text-style: bold; }
    RunView #run-arms { height: 4; max-height: 10; }
    RunView #run-requests { height: 1fr; min-height: 3; }
    RunView #run-empty { padding: 1 2; color: $text-muted; }
    RunView #run-rate { height: 2; margin: 0 1; }
    RunView #run-rate > .sparkline--max-color { color: $accent; }
    RunView #run-rate > .sparkline--min-color { color: $primary; }
    """

    def __init__(
        self,
        source: RunSource | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.source = source
        self.clock = clock
        self._rate_samples: deque[tuple[float, int]] = deque(maxlen=64)
        self._ledger_samples: deque[tuple[float, int]] = deque(maxlen=64)  # (row ts, tokens)
        self._ledger_moved = 0.0  # the view's clock when the newest row ts last changed
        self._p50: float | None = None
        self._p95: float | None = None
        self._latency_seen: tuple[int, int] | None = None
        self._summary_text = ""
        self._arms: list[ArmCounters] = []
        self._rates: deque[float] = deque(maxlen=PLOT_POINTS)
        self._last_rate = 0.0
        self._resume_rate = 0.0  # shown for the first half second after a resume
        self._timer = ActiveTimer()
        self._state_seen = ""
        self.ticks = 0
        self.plot_updates = 0
        self.widths = (ARM_NAME_W, 16, TASK_W)  # arm list name, request arm, request task

    def compose(self) -> ComposeResult:
        yield Static(self._empty_text(), id="run-empty")
        yield Static("", id="run-summary")
        yield Static("tokens/s, last 2 min", classes="run-heading", id="run-rate-label")
        yield Sparkline(list(self._rates), summary_function=max, id="run-rate")
        yield Static(self._arm_header(80), classes="run-heading", id="run-arms-heading")
        yield LineList(
            self._arms,
            lambda arm, width: arm_cells(arm, width, self.widths[0]),
            key=arm_key,
            follow=False,
            id="run-arms",
        )
        yield Static(self._request_header(80), classes="run-heading", id="run-requests-heading")
        yield LineList(
            deque(),
            lambda req, width: request_cells(req, width, self.widths[1], self.widths[2]),
            key=lambda req: (*request_key(req), self.widths),
            id="run-requests",
        )

    def on_mount(self) -> None:
        self.query_one("#run-arms", LineList).can_focus = False
        self._show_source()
        self._update_percentiles()
        self.set_interval(1 / NUMBERS_HZ, self.tick)
        self.set_interval(1 / PERCENTILE_HZ, self._update_percentiles)
        self.set_interval(1 / PLOT_HZ, self._update_plot)

    def on_resize(self) -> None:
        self._fit_plot()
        self._fit_columns()

    def _fit_columns(self) -> None:
        if self.source is None:
            return
        counters = self.source.counters
        tasks = [r.task_id for r in list(counters.requests)[-200:]]
        widths = column_widths(list(counters.arms), tasks, self.size.width or 80)
        if widths == self.widths:
            return
        self.widths = widths
        self.query_one("#run-arms-heading", Static).update(self._arm_header(0))
        self.query_one("#run-requests-heading", Static).update(self._request_header(0))
        self.query_one("#run-arms", LineList).refresh()
        self.query_one("#run-requests", LineList).refresh()

    def attach(self, source: RunSource | None) -> None:
        """Show another run (or none)."""
        self.source = source
        self._rate_samples.clear()
        self._ledger_samples.clear()
        self._timer = ActiveTimer()
        self._latency_seen = None
        self._p50 = self._p95 = None
        if self.is_mounted:
            self._show_source()
            self.tick()

    def _show_source(self) -> None:
        has = self.source is not None
        self.can_focus = not has  # empty: the view takes focus so its keys work; else the list
        self.query_one("#run-empty").display = not has
        for widget_id in (
            "#run-summary",
            "#run-arms-heading",
            "#run-arms",
            "#run-requests-heading",
            "#run-requests",
        ):
            self.query_one(widget_id).display = has
        self._fit_plot()
        if has:
            self.query_one("#run-requests", LineList).set_rows(self.source.counters.requests)

    # -- the 10 Hz pull -------------------------------------------------------------------------

    def tick(self) -> None:
        source = self.source
        if source is None:
            return
        self.ticks += 1
        state = source.state()
        if state != self._state_seen:  # the footer's keys follow the state (^r once it ends)
            self._state_seen = state
            self.refresh_bindings()
        counters = source.counters
        requests = self.query_one("#run-requests", LineList)
        if requests.rows is not counters.requests:  # a followed file was replaced: new counters
            requests.set_rows(counters.requests)
        with self.app.batch_update():
            text = self.summary_text(source)
            if text != self._summary_text:
                self._summary_text = text
                self.query_one("#run-summary", Static).update(text)
            arms = list(counters.arms.values())
            arm_list = self.query_one("#run-arms", LineList)
            if len(arms) != len(self._arms):
                arm_list.styles.height = max(1, min(len(arms), 8))
            self._arms[:] = arms
            self._fit_columns()
            arm_list.sync()
            sync_agent_sessions(self, counters)
            requests.sync()

    def _fit_plot(self) -> None:
        has = self.source is not None
        shown = has and self.size.height >= PLOT_MIN_HEIGHT
        self.query_one("#run-rate").display = shown
        self.query_one("#run-rate-label").display = shown

    def _update_plot(self) -> None:
        """1 Hz: one point of tokens/s history (the plot never redraws per token).

        Only while tokens can flow: a finished, paused or waiting run's plot stands still,
        and an unchanged plot is not redrawn, so an idle view sends the terminal nothing."""
        if self.source is None or self.source.state() not in ("running", "following"):
            return
        self._rates.append(self._last_rate)
        sparkline = self.query_one("#run-rate", Sparkline)
        data = list(self._rates)
        if sparkline.display and data != sparkline.data:
            sparkline.data = data
            self.plot_updates += 1

    def _update_percentiles(self) -> None:
        if self.source is None:
            return
        counters = self.source.counters
        seen = (id(counters), requests_seen(counters))
        if seen == self._latency_seen:
            return
        self._latency_seen = seen
        if counters.latencies_ms:
            values = np.fromiter(counters.latencies_ms, dtype=float)
            self._p50, self._p95 = (float(v) for v in np.percentile(values, [50, 95]))
        else:  # a replaced file starts over: no stale figures from the old one
            self._p50 = self._p95 = None

    def tokens_per_second(self, counters: RunCounters) -> float:
        now = self.clock()
        tokens = counters.total_tokens + counters.estimated_tokens
        self._rate_samples.append((now, tokens))
        while len(self._rate_samples) > 2 and now - self._rate_samples[0][0] > RATE_WINDOW_S:
            self._rate_samples.popleft()
        t0, n0 = self._rate_samples[0]
        if now - t0 < 0.5:  # not enough history yet: the last rate, else the run average
            if self._resume_rate:
                return self._resume_rate
            return tokens / max(1e-9, now - counters.started_at)
        return max(0.0, (tokens - n0) / (now - t0))

    def ledger_tokens_per_second(self, counters: RunCounters) -> float:
        """tokens/s of a followed ledger, in its rows' own time (their ``ts``), not the
        viewer's: a viewer that joins late reads the backlog in one go, and counted by wall
        clock that would be a spike of the whole run's tokens in a tenth of a second."""
        now = self.clock()
        last = counters.last_ts
        if last is None:
            return 0.0
        tokens = counters.total_tokens + counters.estimated_tokens
        samples = self._ledger_samples
        if samples and (tokens < samples[-1][1] or last < samples[-1][0]):
            samples.clear()  # the file started over: new counters
        if samples and samples[-1][0] == last:
            samples[-1] = (last, tokens)
        else:
            samples.append((last, tokens))
            self._ledger_moved = now
        while len(samples) > 2 and last - samples[0][0] > RATE_WINDOW_S:
            samples.popleft()
        if now - self._ledger_moved > RATE_WINDOW_S:
            return 0.0  # no new rows for a while: nothing is being spent now
        t0, n0 = samples[0]
        if last - t0 < 0.5:  # one stretch of rows so far: the last rate, else the run's average
            if self._resume_rate:
                return self._resume_rate
            span = last - (counters.first_ts if counters.first_ts is not None else last)
            return tokens / span if span > 0 else 0.0
        return max(0.0, (tokens - n0) / (last - t0))

    def summary_text(self, source: RunSource) -> str:
        c = source.counters
        state = source.state()
        active = state in ("running", "following")
        now = self.clock()
        elapsed = self._timer.elapsed(now, c.started_at, state)
        if getattr(source, "from_ledger", False) and c.first_ts is not None:
            elapsed = (c.last_ts or c.first_ts) - c.first_ts  # the run's span, not the viewer's
        from_ledger = getattr(source, "from_ledger", False)
        if not active:  # tokens that arrive while paused must not count as a burst on resume
            self._rate_samples.clear()
            self._ledger_samples.clear()
            self._resume_rate = self._last_rate or self._resume_rate
        rate = None
        if active:
            rate = self.ledger_tokens_per_second(c) if from_ledger else self.tokens_per_second(c)
        self._last_rate = rate or 0.0
        state_style = {
            "running": "$success",
            "following": "$success",
            "paused": "$warning",
            "cancelling": "$warning",
            "failed": "$error",
            "waiting": "$warning",
            "not a ledger": "$error",
        }.get(state, "$text-muted")
        shown = state
        if state == "paused" and from_ledger:  # p stops reading the file; the run goes on
            shown = "view paused (the run goes on; p catches up)"
        # one line at any width: the label (a ledger's path) gives way in its middle
        detail = source.detail()
        head = f"● {shown}  {fmt.duration(elapsed)}  "
        room = (self.size.width or 80) - 2 - len(head) - (len(detail) + 2 if detail else 0)
        label = fmt.middle(str(source.label), max(16, room))
        if detail:  # what is left after a 16-cell label: the detail gives way at its end
            spare = (self.size.width or 80) - 2 - len(head) - len(label) - 2
            detail = detail if len(detail) <= spare else detail[: max(0, spare - 1)] + "…"
        width = max(20, (self.size.width or 80) - 2)
        status = f"[b {state_style}]● {shown}[/]  {fmt.duration(elapsed)}  {fmt.markup(label)}" + (
            f"  [$text-muted]{fmt.markup(detail)}[/]" if detail else ""
        )
        # every line is one line at any width: the parts come most useful first and the
        # ones that do not fit are dropped from the end
        tokens = [
            f"total [b]{fmt.count(c.total_tokens)}[/b]",
            *([f"{fmt.count(rate)} tok/s"] if rate is not None else []),
            f"prompt {fmt.count(c.prompt_tokens)}",
            f"completion {fmt.count(c.completion_tokens)}",
        ]
        flight = [
            f"retries {fmt.count(c.retries)}",
            f"429s {fmt.count(c.rate_limited)}",
            f"p50 {fmt.millis(self._p50)}",
            f"p95 {fmt.millis(self._p95)}",
        ]
        if from_ledger:  # a ledger holds finished calls only: the least useful part, last
            flight.append("in flight: not in a ledger")
        else:
            flight.insert(0, f"{c.in_flight}/{c.concurrency or '?'} in flight")
        lines = [
            fmt.fit_parts("", [status], width),
            fmt.fit_parts("[b]Tokens[/b]  ", tokens, width),
            *usage_lines(c, width),
            self._budget_line(c, getattr(source, "counting_since", None), width),
            fmt.fit_parts("[b]Flight[/b]  ", flight, width),
            self._errors_line(c, width),
        ]
        return "\n".join(lines)

    @staticmethod
    def _budget_line(c: RunCounters, since: str | None = None, width: int = 78) -> str:
        used = c.total_tokens + c.estimated_tokens
        head = "[b]Budget[/b]  "
        if since:  # --from-end: what was spent before attaching is unknown, so no gauge
            limit = [f"limit {fmt.count(c.budget_tokens)}"] if c.budget_tokens else []
            parts = [f"{fmt.count(used)} since {since}", *limit, "no gauge (--from-end)"]
            return fmt.fit_parts(head, parts, width)
        if not c.budget_tokens:
            return fmt.fit_parts(head, ["no token limit", f"used {fmt.count(used)}"], width)
        fraction = used / c.budget_tokens
        style = "$error" if fraction >= 0.9 else "$warning" if fraction >= 0.7 else "$success"
        gauge = f"[{style}]{fmt.gauge(fraction, 20)}[/] {fraction:4.0%}  "
        return fmt.fit_parts(head + gauge, [f"{fmt.count(used)} / {fmt.count(c.budget_tokens)}"], width)

    @staticmethod
    def _errors_line(c: RunCounters, width: int = 78) -> str:
        if not c.errors_by_class:
            return "[b]Errors[/b]  none"
        parts = [f"[$error]{fmt.markup(k)} {v}[/]" for k, v in c.errors_by_class.most_common(6)]
        return fmt.fit_parts("[b]Errors[/b]  ", parts, width)

    def _arm_header(self, width: int) -> str:
        name_w = self.widths[0]
        return (
            f"{'arm'.ljust(name_w)} {'progress'.ljust(12)} {'done'.rjust(9)} {'ok'.rjust(6)} "
            f"{'err'.rjust(5)} {'tokens'.rjust(9)} stream"
        )

    def _request_header(self, width: int) -> str:
        _, arm_w, task_w = self.widths
        return (
            f"{'status'.ljust(7)}{'arm'.ljust(arm_w)} {'task'.ljust(task_w)} {'#'.rjust(4)} "
            f"{'tokens'.rjust(7)} {'latency'.rjust(7)} error"
        )

    @staticmethod
    def _empty_text() -> str:
        return (
            "No run yet. To start one:\n\n"
            "• [b]ctrl+r[/b] run the demo experiment on the built-in simulator "
            "(or [b]eloledger demo[/b]; every command is in the palette, [b]ctrl+p[/b])\n"
            "• [b]o[/b] open a spec and run it (or [b]eloledger run SPEC.toml[/b])\n"
            "• [b]w[/b] watch a ledger written by another process or machine "
            "(or [b]eloledger watch LEDGER.jsonl[/b])"
        )

    # -- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        following = getattr(self.source, "from_ledger", False)
        if action == "toggle_pause":
            return self.source is not None and self.source.can_pause() and not following
        if action == "pause_view":  # a finished run has nothing more to read: no pause
            return (
                self.source is not None
                and self.source.can_pause()
                and following
                and self.source.state() != "run finished"
            )
        if action == "cancel_run":
            return self.source is not None and self.source.can_cancel()
        if action == "follow":  # nothing to follow without a run
            return self.source is not None
        if action == "run_demo":  # in the footer while no run is going, never when watching
            if following:
                return False
            return self.source is None or self.source.state() not in LIVE_STATES
        return True

    def action_run_demo(self) -> None:
        self.app.action_run_demo()  # type: ignore[attr-defined]

    def action_toggle_pause(self) -> None:
        if self.source is not None and self.source.can_pause():
            self.source.toggle_pause()
            self.tick()
            self.refresh_bindings()

    def action_pause_view(self) -> None:
        """p on a followed ledger: stop (or resume) reading it; the writer is not ours."""
        self.action_toggle_pause()

    def action_cancel_run(self) -> None:
        if self.source is None or not self.source.can_cancel():
            return
        from eloledger.tui.dialogs import ConfirmScreen

        then, later = cancel_words(self.source)

        def done(confirmed: bool | None) -> None:
            if confirmed and self.source is not None:
                self.source.cancel()
                self.notify(f"Cancelling: calls in flight are aborted; {later}.")
                self.refresh_bindings()

        self.app.push_screen(
            ConfirmScreen(
                f"Cancel the {then}? No new calls start and calls in flight are aborted; {later}."
            ),
            done,
        )

    def action_open_spec(self) -> None:
        """Ask for a spec file and start it here (the app refuses while a run is going)."""
        from eloledger.tui.dialogs import PathScreen

        def chosen(path: Any) -> None:
            if path is not None:
                self.app.start_run(path)  # type: ignore[attr-defined]

        self.app.push_screen(
            PathScreen("Experiment spec (TOML) to run now:", "my-spec.toml"), chosen
        )

    def action_watch_ledger(self) -> None:
        """Ask for a ledger and follow it (a missing file is waited for)."""
        from eloledger.tui.dialogs import PathScreen

        def chosen(path: Any) -> None:
            if path is not None:
                self.app.start_watch(path)  # type: ignore[attr-defined]

        self.app.push_screen(
            PathScreen(
                "Ledger (JSONL) to follow; a file that does not exist yet is waited for:",
                "runs/exp.ledger.jsonl",
                must_exist=False,
            ),
            chosen,
        )

    def action_follow(self) -> None:
        self.query_one("#run-requests", LineList).action_follow()
