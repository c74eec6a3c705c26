"""Run an experiment: sample every (task, arm, session, sample), judge, write comparisons.

Shape of a run:

1. *Sampling*: ``concurrency`` workers take calls in task order. Each call is streamed
   (the live counter gets estimated tokens per chunk) and every attempt becomes one ledger row;
   a retryable failure is written with ``will_retry = true`` and retried after an exponential
   backoff with jitter, or after the server's ``Retry-After`` (capped). Quota, auth and
   not-found failures are never retried. Rule and tests judges score a sample before its row is
   written, so ``score``/``passed`` live on the row itself.
2. *Judging*: the ledger is read back (it is the single source of truth, also after
   ``--resume``), each (task, arm, session) becomes one :class:`ArmResult` (see
   :mod:`eloledger.judges` for how each arm kind is scored), LLM-judge calls are made where
   the spec asks for them (``role = "judge"`` rows, never counted in an arm's cost), and the
   results and comparisons files are written next to the ledger.

Selection is *derived*, not stored as a row: the verifier and majority picks are pure
functions of the sample rows, and an LLM judge's picks follow from its ``judge`` rows. The
results file (``<ledger>.results.csv``) records every pick for people and tools.

Stopping: ``max_total_tokens`` (sample + judge tokens, counted live) stops new calls and lets
in-flight calls finish; ``cancel`` aborts in-flight calls (they are redone on ``--resume``);
``pause`` (set = paused) holds new calls until it is cleared; five consecutive failures that will
fail again (a rejected key, no quota) stop new calls too (:mod:`.outcome`).

This module orchestrates; one job per neighbour: :mod:`.scoring` (a sample's score),
:mod:`.selection` (an arm's pick), :mod:`.judging` (LLM-judge calls), :mod:`.armstats` (per-arm
statistics), :mod:`.outcome` (whether the run produced something usable, and why not).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import stat
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eloledger.errors import UserError
from eloledger.judges.compare import (
    ArmResult,
    score_comparisons,
    with_lengths,
    write_comparisons,
    write_results,
)
from eloledger.judges.verdicts import mostly_missing, verdict_warning
from eloledger.ledger import LedgerRow, LedgerWriter
from eloledger.ledger.answered import Answered
from eloledger.ledger.sources import check_writable
from eloledger.runner import agent_run, strategies
from eloledger.runner.armstats import arm_stats, json_friendly
from eloledger.runner.counters import RunCounters
from eloledger.runner.judging import LlmJudge
from eloledger.runner.outcome import PERSISTENT, Breaker, Where, arm_failures, fix_once
from eloledger.runner.progress import planned_calls
from eloledger.runner.providers import RETRYABLE, CallResult, Provider
from eloledger.runner.resolve import Endpoint, resolve_endpoint, resolve_tasks
from eloledger.runner.result import RunResult
from eloledger.runner.rows import call_row, task_labels
from eloledger.runner.scoring import score_sample
from eloledger.runner.selection import select
from eloledger.runner.shard import Shard
from eloledger.runner.spec import MULTI_ROUND, ArmSpec, ExperimentSpec
from eloledger.runner.state import LedgerState, read_state
from eloledger.tasks import Task
from eloledger.tasks.registry import made_ids_note
from eloledger.words import plural


async def run_experiment(
    spec: ExperimentSpec,
    *,
    counters: RunCounters | None = None,
    pause: asyncio.Event | None = None,
    cancel: asyncio.Event | None = None,
    resume: bool = False,
    shard: Shard | None = None,
) -> RunResult:
    """Run (or, with ``resume``, complete) the experiment; the TUI and the CLI both call this.

    With ``shard``, only that slice's tasks (every arm and session of each) are run and judged."""
    tasks = resolve_tasks(spec)
    executables = agent_run.check_agent_arms(spec)
    agent_run.check_sandbox(spec, tasks, executables)  # refuse before a request is sent
    endpoint = agent_run.agents_only_endpoint(spec) or resolve_endpoint(spec)
    counters = counters if counters is not None else RunCounters()
    _check_ledger(spec.ledger, resume)
    # a resumed run redoes calls that failed for a reason the user has fixed since (the key)
    state = read_state(spec.ledger, spec.name, redo=PERSISTENT) if resume else LedgerState()
    run_id = state.run_id or f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"

    async with contextlib.AsyncExitStack() as stack:
        if endpoint.is_sim:
            endpoint.base_url = await stack.enter_async_context(_sim(spec, endpoint))
        provider = _provider(spec, endpoint)
        stack.push_async_callback(provider.close)
        routes = {None: _Route(endpoint, provider)}
        for profile, other in _arm_endpoints(spec, endpoint).items():
            routes[profile] = _Route(other, _provider(spec, other))
            stack.push_async_callback(routes[profile].provider.close)
        writer = stack.enter_context(LedgerWriter(spec.ledger))
        run = _Run(spec, endpoint, tasks, provider, writer, counters, state, run_id, pause, cancel)
        run.routes = routes
        run.shard = shard
        if (note := made_ids_note(tasks)) is not None:
            run.result.notes.append(note)
        if executables:
            sim_root = endpoint.base_url.removesuffix("/v1") if endpoint.is_sim else None
            endpoints = agent_run.resolve_agent_endpoints(spec, sim_root)
            run.agents = agent_run.AgentSessions(spec, executables, endpoints, run_id, resume)
            stack.push_async_callback(run.agents.close)  # the run's meter
            counters.agent_sessions = run.agents.live
        return await run.execute()


@dataclass
class _Route:
    """Where one arm's calls go: the experiment's gateway, or the arm's own ``profile``."""

    endpoint: Endpoint
    provider: Provider


def _provider(spec: ExperimentSpec, endpoint: Endpoint) -> Provider:
    return Provider(
        wire_api=endpoint.wire_api,
        base_url=endpoint.base_url or "",
        api_key=endpoint.api_key,
        model=endpoint.model,
        timeout_s=spec.timeout_s,
        auth=endpoint.auth,
        max_connections=max(16, spec.concurrency * 2),
    )


def _arm_endpoints(spec: ExperimentSpec, main: Endpoint) -> dict[str, Endpoint]:
    """The endpoint of every other profile an arm names (resolved, key checked, before a call)."""
    from dataclasses import replace

    from eloledger.runner.spec import spec_line

    found: dict[str, Endpoint] = {}
    for index, arm in enumerate(spec.arms):
        name = arm.profile
        if name is None or name == main.profile or name in found:
            continue
        if main.is_sim or name == "sim":
            raise UserError(
                f"{spec_line(spec, 'arms', 'profile', index)}: arm {arm.name!r}: profile "
                f"{name!r} beside the experiment's {main.profile!r}: the simulator cannot be "
                "mixed with a gateway in one run",
                fix="remove profile from this arm, or run the simulator in its own spec",
            )
        try:
            found[name] = resolve_endpoint(
                replace(spec, profile=name, model=arm.model, wire_api="")
            )
        except UserError as exc:
            raise UserError(
                f"{spec_line(spec, 'arms', 'profile', index)}: arm {arm.name!r}: {exc.message}",
                fix=exc.fix,
            ) from None
    return found


def _check_ledger(path: Path, resume: bool) -> None:
    """Refuse before the first request: a ledger that is not a file, or one with rows already."""
    check_writable(path)  # a folder, FIFO or socket: one clear line before anything reads it
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):  # a device the writer could take: a run reads it back
        raise UserError(
            f"{path}: the ledger is not a regular file",
            fix="give a file path with --ledger (e.g. runs/NAME.ledger.jsonl)",
        )
    if resume:
        return
    if info.st_size > 0:
        raise UserError(
            f"{path}: the ledger already has rows",
            fix="add --resume to complete that run, or give a new file with --ledger",
        )


@contextlib.asynccontextmanager
async def _sim(spec: ExperimentSpec, endpoint: Endpoint):  # noqa: ANN202
    from eloledger.sim import SimServer

    server = SimServer(
        port=0,
        fault=spec.sim.fault,
        fault_rate=spec.sim.fault_rate,
        seed=spec.sim.seed,
        speed=spec.sim.speed,
        api_keys={spec.sim.api_key} if spec.sim.api_key else None,
    )
    await server.start()
    try:
        yield server.base_url if endpoint.wire_api == "anthropic" else server.openai_base_url
    finally:
        await server.stop()


@dataclass(frozen=True)
class _Call:
    task: Task
    arm: ArmSpec
    session: int
    sample: int


@dataclass(frozen=True)
class _Chain:
    """A multi-round arm's calls on one (task, session): its rounds run in order."""

    task: Task
    arm: ArmSpec
    session: int


class _Run:
    def __init__(
        self,
        spec: ExperimentSpec,
        endpoint: Endpoint,
        tasks: list[Task],
        provider: Provider,
        writer: LedgerWriter,
        counters: RunCounters,
        state: LedgerState,
        run_id: str,
        pause: asyncio.Event | None,
        cancel: asyncio.Event | None,
    ) -> None:
        self.spec, self.endpoint, self.tasks = spec, endpoint, tasks
        self.provider, self.writer, self.counters, self.state = provider, writer, counters, state
        self.run_id, self.pause, self.cancel = run_id, pause, cancel
        self.result = RunResult(
            run_id=run_id,
            experiment=spec.name,
            ledger_path=spec.ledger,
            comparisons_path=None,
            results_path=None,
            stopped="completed",
            base_url=endpoint.base_url,
        )
        self.budget_hit = False
        # Set when the sampling phase is torn down (ctrl-C, the TUI closing): a worker whose
        # cancellation was swallowed (3.11's wait_for returns a result that finished in the
        # same loop pass as the cancel) must still start no new call.
        self.closing = False
        self.judge_tokens = 0
        self.rng = random.Random(spec.seed)
        self.tests_gate = asyncio.Semaphore(2)
        self.judge = self._llm_judge()
        self.slots = asyncio.Semaphore(spec.concurrency)
        self.agents: agent_run.AgentSessions | None = None
        self.shard: Shard | None = None
        self.breaker = Breaker()
        self.answered = Answered()  # which model answered each call: substitutions warned
        self.routes: dict[str | None, _Route] = {None: _Route(endpoint, provider)}

    # ----------------------------------------------------------------------------- phases
    async def execute(self) -> RunResult:
        started = time.monotonic()
        c = self.counters
        c.concurrency = self.spec.concurrency
        c.budget_tokens = self.spec.max_total_tokens
        for name, planned in planned_calls(self.spec, len(self.tasks), self.shard).items():
            c.arm(name).planned = planned
        for row in self.state.sample_rows:
            c.apply_row(row)
        c.resumed_tokens = c.total_tokens  # spent before this process: not in tok/s
        self.result.resumed_calls = len(self.state.finals)
        try:
            await self._sample_all()
            if self.result.stopped != "cancelled":
                await self._judge_all()
            self._stop_report()
        finally:
            c.finished = True
            c.in_flight = 0
            self.result.elapsed_s = time.monotonic() - started
        return self.result

    def _owns(self, t: int, session: int) -> bool:
        return self.shard is None or self.shard.owns(t)  # a task's sessions stay together

    def _pending(self) -> Iterator[_Call | _Chain]:
        for t, task in enumerate(self.tasks):
            for arm in self.spec.arms:
                for session in range(self.spec.sessions):
                    if not self._owns(t, session):
                        continue
                    if arm.kind in MULTI_ROUND:
                        if len(self._rows(task, arm, session)) < arm.n * arm.rounds:
                            yield _Chain(task, arm, session)
                        continue
                    for sample in range(arm.n):
                        key = (task.task_id, arm.name, session, sample, 0)
                        if key not in self.state.finals:
                            yield _Call(task, arm, session, sample)

    def _rows(self, task: Task, arm: ArmSpec, session: int) -> strategies.Rows:
        """The arm's final rows on (task, session) by (sample, round), from the ledger state."""
        finals = self.state.finals
        return {
            (s, r): finals[key]
            for s in range(arm.n)
            for r in range(arm.rounds)
            if (key := (task.task_id, arm.name, session, s, r)) in finals
        }

    def _not_run(self) -> int:
        """Calls never made: a chain counts each of its missing calls."""
        missing = 0
        for item in self._pending():
            if isinstance(item, _Chain):
                missing += item.arm.n * item.arm.rounds - len(
                    self._rows(item.task, item.arm, item.session)
                )
            else:
                missing += 1
        return missing

    async def _sample_all(self) -> None:
        pending = self._pending()

        async def worker() -> None:
            for call in pending:
                if self._stopping():
                    return
                if isinstance(call, _Chain):
                    await self._chain(call)
                else:
                    await self._sample(call)

        workers = [asyncio.create_task(worker()) for _ in range(self.spec.concurrency)]
        gathered = asyncio.gather(*workers)
        gathered.add_done_callback(_retrieve)  # its error is raised below, or it was cancelled
        waiters: set[asyncio.Future] = {gathered}
        cancel_wait = asyncio.ensure_future(self.cancel.wait()) if self.cancel else None
        if cancel_wait is not None:
            waiters.add(cancel_wait)
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if self.cancel is not None and self.cancel.is_set() and not gathered.done():
                self.result.stopped = "cancelled"
            else:
                gathered.result()  # a worker's error (a ledger write failing, a bug) surfaces here
        except BaseException:  # ctrl-C, the TUI closing, a worker's error: stop for good
            self.closing = True
            raise
        finally:
            # Whatever ended the wait (done, cancel, ctrl-C, an error in one worker), no call may
            # outlive this phase: the writer and the HTTP client close right after it.
            if cancel_wait is not None:
                cancel_wait.cancel()
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        if self.cancel is not None and self.cancel.is_set():
            self.result.stopped = "cancelled"
        elif self.breaker.tripped:
            self.result.stopped = "errors"
        elif self.budget_hit:
            self.result.stopped = "budget"
        self.state = read_state(self.spec.ledger, self.spec.name)
        self.result.not_run = self._not_run()

    async def _sample(self, call: _Call) -> None:
        if call.arm.kind == "agent":
            await self._agent_session(call)
            return
        await self._chat_call(call.task, call.arm, call.session, call.sample, 0, {})

    async def _chain(self, chain: _Chain) -> None:
        """Debate / refine: round r's calls (one per sample) start once round r - 1 is final;
        their prompts quote the earlier rows (:mod:`.strategies`). A stop ends the chain."""
        task, arm, session = chain.task, chain.arm, chain.session
        rows = self._rows(task, arm, session)
        for round_ in range(arm.rounds):
            todo = [s for s in range(arm.n) if (s, round_) not in rows]
            done = await asyncio.gather(
                *(self._chat_call(task, arm, session, s, round_, rows) for s in todo)
            )
            for sample, row in zip(todo, done, strict=True):
                if row is not None:
                    rows[(sample, round_)] = row
            if any(row is None for row in done):
                return  # stopping (budget, cancel, errors): the rest is not run

    async def _chat_call(
        self,
        task: Task,
        arm: ArmSpec,
        session: int,
        sample: int,
        round_: int,
        rows: strategies.Rows,
    ) -> LedgerRow | None:
        """One chat call of an arm: the strategy's prompt, the arm's system, model and route."""
        key = (task.task_id, arm.name, session, sample, round_)
        prompt, feedback = strategies.prompt_for(task, arm, sample, round_, rows)
        fields: dict[str, Any] = {
            "task_id": task.task_id,
            "arm": arm.name,
            "session": session,
            "sample": sample,
            "round": round_,
            "role": "sample",
        }
        if arm.prompt_hash is not None:
            fields["prompt_hash"] = arm.prompt_hash
        if arm.kind in MULTI_ROUND:
            fields["feedback"] = feedback  # what a later round was shown: debaters, self, tests
        parts = f"{self.spec.seed}|{task.task_id}|{arm.name}|{session}|{sample}"
        if round_:
            parts += f"|{round_}"
        return await self._call_with_retries(
            fields,
            prompt,
            max_tokens=arm.max_tokens,
            temperature=arm.temperature,
            seed=zlib.crc32(parts.encode()),
            first_attempt=self.state.next_attempt.get(key, 1),
            task=task,
            model=arm.model,
            system=arm.system,
            route=self.routes.get(arm.profile) or self.routes[None],
        )

    async def _agent_session(self, call: _Call) -> None:
        """One whole agent session = one call: its live estimate feeds the counters; crossing
        ``max_total_tokens`` stops it at once (a session can burn far past a budget), and its
        row (error class ``budget``) keeps the tokens it spent. Its one row replaces the
        estimate when it ends."""
        assert self.agents is not None
        c, arm = self.counters, call.arm.name
        await self._wait_unpaused()
        if self._stopping():
            return
        async with self.slots:
            if self._stopping():
                return
            c.in_flight += 1
            shown = 0

            def progress(state: agent_run.SessionState) -> None:
                nonlocal shown
                if state.tokens > shown:
                    c.on_tokens(arm, state.tokens - shown)
                    shown = state.tokens
                    if self._stopping() and not self.cancel_is_set():  # the hard budget
                        state.fail("budget", "max_total_tokens reached: session stopped")
                        state.abort = True

            key = (call.task.task_id, arm, call.session, call.sample, 0)
            try:
                rows = await self.agents.run(
                    call.task, call.arm, call.session, call.sample,
                    attempt=self.state.next_attempt.get(key, 1), on_progress=progress,
                )  # fmt: skip
            finally:
                c.in_flight -= 1
                c.settle_estimate(arm, shown)
        for row in rows:
            row.update(self._task_labels(call.task))
            if row.role in ("checkpoint", "call"):  # a snapshot; a call in its session's sum
                self.writer.append(row)
                continue
            if _answer_only(call.task) and row.status == "ok" and row.get("score") is None:
                # the CLI's final message is the answer: judged like a chat reply
                await score_sample(row, call.task, self.spec.judge, self.tests_gate)
            self.writer.append(row)
            c.apply_row(row)
            self.result.attempts += 1

    def cancel_is_set(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    # ----------------------------------------------------------------------------- one call
    def _stopping(self) -> bool:
        if self.closing or (self.cancel is not None and self.cancel.is_set()):
            return True
        if self.breaker.tripped:
            return True
        limit = self.spec.max_total_tokens
        if limit is not None and not self.budget_hit:
            c = self.counters
            if c.total_tokens + c.estimated_tokens + self.judge_tokens >= limit:
                self.budget_hit = True
        return self.budget_hit

    async def _wait_unpaused(self) -> None:
        while self.pause is not None and self.pause.is_set():
            self.counters.paused = True
            if self.cancel is not None and self.cancel.is_set():
                return
            await asyncio.sleep(0.05)
        self.counters.paused = False

    async def _call_with_retries(
        self,
        fields: dict[str, Any],
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        first_attempt: int,
        task: Task,
        model: str | None = None,
        system: str | None = None,
        route: _Route | None = None,
        annotate: Callable[[LedgerRow], None] | None = None,
    ) -> LedgerRow | None:
        """Make one logical call; every attempt is a ledger row. None if never made (stop).
        ``annotate`` adds fields read from an ok answer (a judge's winner) before it is written."""
        route = route or self.routes[None]
        role = fields["role"]
        arm = fields["arm"]
        c = self.counters
        attempt = first_attempt
        headers = None
        if self.endpoint.is_sim:
            headers = {
                "x-sim-sample": f"{fields.get('judged', arm)}|{fields['session']}|{fields['sample']}|{fields['round']}"
            }
        while True:
            await self._wait_unpaused()
            if self._stopping():
                return None
            async with self.slots:
                if self._stopping():
                    return None
                c.in_flight += 1
                on_tokens = (lambda n: c.on_tokens(arm, n)) if role == "sample" else None
                try:
                    res = await route.provider.call(
                        prompt,
                        system=system,
                        max_tokens=max_tokens,
                        temperature=temperature,
                        seed=seed,
                        on_tokens=on_tokens,
                        headers=headers,
                        model=model,
                    )
                finally:
                    c.in_flight -= 1
            if role == "sample":
                c.settle_estimate(arm, res.streamed_estimate)
            row = call_row(
                fields, res, run_id=self.run_id, experiment=self.spec.name, model=model,
                endpoint=route.endpoint, labels=self._task_labels(task), attempt=attempt,
                max_tokens=max_tokens, temperature=temperature,
            )  # fmt: skip
            if res.status == "ok" and role == "sample":
                verdict = await score_sample(row, task, self.spec.judge, self.tests_gate)
                if verdict is not None and verdict.detail and "feedback" in fields:
                    row.test_detail = verdict.detail[:2000]  # a refine round quotes it
            if res.status == "ok" and annotate is not None:
                annotate(row)
            retry = (
                res.status == "error"
                and res.error_class in RETRYABLE
                and attempt < self.spec.retry.max_attempts
                and not self._stopping()
            )
            if retry:
                row.will_retry = True
            self._append(row)
            self.breaker.record(row)
            self.answered.record(row)
            if role == "sample":
                c.apply_row(row)
                self.result.attempts += 1
            else:
                self.judge_tokens += int(row.get("total_tokens") or 0)
                self.result.judge_calls += 1
            if not retry:
                return row
            self.result.retries += 1
            await asyncio.sleep(self._backoff(attempt, res))
            attempt += 1

    def _append(self, row: LedgerRow) -> None:
        try:
            self.writer.append(row)
        except UserError as exc:  # the writer's account of a full or read-only file system
            raise UserError(
                f"{exc.message}; the run stopped",
                fix=f"{exc.fix or 'give a writable file with --ledger'}; the rows already "
                "written stay valid and --resume continues from them",
            ) from None
        except OSError as exc:  # anything the writer did not name (the file removed under us)
            raise UserError(
                f"{self.spec.ledger}: cannot write the ledger ({exc.strerror or exc}); "
                "the run stopped",
                fix="free space or give a writable file with --ledger; the rows already "
                "written stay valid and --resume continues from them",
            ) from None

    def _backoff(self, attempt: int, res: CallResult) -> float:
        r = self.spec.retry
        if res.retry_after_s is not None:
            wait = min(res.retry_after_s, r.retry_after_cap_s)
            return wait + self.rng.uniform(0, 0.1 * wait + 0.05)
        step = min(r.cap_s, r.base_s * (2 ** (attempt - 1)))
        return step / 2 + self.rng.uniform(0, step / 2)

    def _task_labels(self, task: Task) -> dict[str, Any]:
        return task_labels(task, self.spec.split)

    # ----------------------------------------------------------------------------- judging
    def _llm_judge(self) -> LlmJudge:
        return LlmJudge(self.spec, self.state, self.tasks, self.result, self._call_with_retries)

    async def _judge_all(self) -> None:
        self.judge = self._llm_judge()  # on the ledger state as sampling left it
        results: list[ArmResult] = []
        knockouts = []
        kind = self.spec.judge.kind
        by_llm = {t.task_id for t in self.tasks if kind == "llm" or _open(t)}
        for task in self.tasks:
            self.result.judged_by[_judged_by(task, kind)] = (
                self.result.judged_by.get(_judged_by(task, kind), 0) + 1
            )
            for arm in self.spec.arms:
                # a verifier has nothing to check on a prompt-only task: the LLM judge picks
                by_judge = arm.select == "judge" or (arm.select == "verifier" and _open(task))
                for session in range(self.spec.sessions):
                    rows = strategies.final_rows(arm, self._rows(task, arm, session))
                    if any(r is None for r in rows):
                        continue  # incomplete (stopped early): not judged
                    result = select(task, arm, session, rows)  # type: ignore[arg-type]
                    results.append(result)
                    if by_judge and result.samples_ok > 1:
                        knockouts.append(self.judge.knockout(task, arm, session, rows, result))  # type: ignore[arg-type]
        if knockouts:
            await asyncio.gather(*knockouts)
        answered = [r for r in results if r.samples_ok and r.task_id not in by_llm]
        if kind != "llm" and answered and all(r.score is None for r in answered):
            self.result.warnings.append(
                "no sample could be scored (the tasks have neither answer nor tests): "
                'set kind = "llm" in [judge] to compare the arms with an LLM judge'
            )
        names = [a.name for a in self.spec.arms]
        low = [t.task_id for t in self.tasks if t.direction == "min"]  # scored tasks
        comparisons = score_comparisons([r for r in results if r.task_id not in by_llm], names, low)
        open_results = [r for r in results if r.task_id in by_llm]
        if open_results:
            comparisons += await self.judge.comparisons(open_results)
        if kind == "auto" and len(self.result.judged_by) > 1:
            self.result.notes.append(
                "judged per task (kind = auto): "
                + ", ".join(f"{n} by {how}" for how, n in sorted(self.result.judged_by.items()))
            )
        if self.cancel is not None and self.cancel.is_set():
            self.result.stopped = "cancelled"  # judge calls were cut short: write nothing
            return
        self.result.results_path = self.spec.results_path()
        self.result.comparisons_path = self.spec.comparisons_path()
        write_results(self.result.results_path, results)
        self.result.comparisons = write_comparisons(
            self.result.comparisons_path, with_lengths(comparisons, results)
        )
        if self.budget_hit and self.result.stopped == "completed":
            self.result.stopped = "budget"
        self._verdict_report()
        self.result.warnings[:0] = agent_run.sandbox_warnings(self.spec)  # sandbox = "none"
        arms = arm_stats(self.spec, self.state, self.result.judge_no_verdict)
        self.result.failures.extend(arm_failures(arms, self._where()))
        self.result.arms = json_friendly(arms)
        self.result.arm_tokens = sum(a["tokens"] for a in arms)
        # judge rows already in the ledger after sampling (a resumed run's) + the ones written since
        self.result.judge_tokens = self.state.judge_tokens + self.judge_tokens

    def _stop_report(self) -> None:
        """Say what a stop left undone: judge calls not made, and an early stop on errors."""
        self.result.warnings += self.answered.warnings()
        skipped = self.judge.skipped
        if skipped:
            self.result.warnings.append(
                f"{plural(skipped, 'judge call')} not made (the run was stopping): their "
                "matches are left out"
            )
        tripped = self.breaker.message(self.result.not_run + skipped, self._where())
        if tripped:
            self.result.failures.insert(0, tripped)
            if self.result.stopped == "completed":  # tripped by the judge calls
                self.result.stopped = "errors"
        self.result.failures = fix_once(self.result.failures)

    def _where(self) -> Where:
        e = self.endpoint
        return Where(e.profile, e.key_label, e.base_url, e.model)

    def _verdict_report(self) -> None:
        """Verdict-less judge calls: a warning when some, a failure when they are most."""
        r = self.result
        judge = self.spec.judge.model or self.endpoint.model  # the model on its ledger rows
        lost = sum(r.judge_no_verdict_pairs.values())
        warning = verdict_warning(r.judge_verdict_calls, r.judge_no_verdict_pairs,
                                  {judge: (r.judge_verdict_calls, lost)})  # fmt: skip
        if warning is None:
            return
        r.warnings.append(warning)
        if mostly_missing(r.judge_verdict_calls, r.judge_no_verdict_pairs):
            r.failures.append(
                "most judge calls gave no verdict (failed, or no final VERDICT: A|B|TIE line): "
                "the judge model ignores the format; fix: use a judge model that follows it "
                "([judge] model) or raise [judge] max_tokens"
            )


def _open(task: Task) -> bool:
    """A prompt-only task: nothing to check it by, so an LLM judge compares its answers."""
    return task.answer is None and not task.tests and not task.files


def _judged_by(task: Task, kind: str) -> str:
    """How a task's answers are compared: what it has, unless the spec names one judge."""
    if kind != "auto":
        return {"rule": "rule", "tests": "tests", "llm": "the LLM judge"}[kind]
    if task.tests and task.answer is None:
        return "tests"
    if task.answer is not None:
        return "rule"
    return "the tests of its files" if task.files else "the LLM judge"


def _answer_only(task: Task) -> bool:
    """A task an agent answers in words: an answer to check, no files or tests to run."""
    return task.answer is not None and not task.files and not task.tests


def _retrieve(future: asyncio.Future) -> None:
    """Mark a gather's outcome as seen, so asyncio never logs it as 'never retrieved'."""
    if not future.cancelled():
        future.exception()
