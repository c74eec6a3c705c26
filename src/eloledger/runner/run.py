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
``pause`` (set = paused) holds new calls until it is cleared.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.errors import UserError
from eloledger.judges.code import judge_tests
from eloledger.judges.compare import (
    ArmResult,
    majority,
    score_comparisons,
    write_comparisons,
    write_results,
)
from eloledger.judges.extract import extract_answer
from eloledger.judges.llm import both_orders, judge_prompt, parse_verdict
from eloledger.judges.rule import judge_rule
from eloledger.ledger import LedgerWriter
from eloledger.runner import agent_run
from eloledger.runner.counters import RunCounters
from eloledger.runner.providers import RETRYABLE, CallResult, Provider
from eloledger.runner.resolve import Endpoint, resolve_endpoint, resolve_tasks
from eloledger.runner.shard import Shard
from eloledger.runner.spec import ArmSpec, ExperimentSpec
from eloledger.runner.state import LedgerState, read_state
from eloledger.tasks import Task


@dataclass
class RunResult:
    run_id: str
    experiment: str
    ledger_path: Path
    comparisons_path: Path | None
    results_path: Path | None
    stopped: str  # completed | budget | cancelled
    attempts: int = 0  # sample-call attempts made by this invocation (ledger rows written)
    retries: int = 0
    judge_calls: int = 0
    resumed_calls: int = 0  # calls already complete in the ledger before this invocation
    not_run: int = 0  # calls never made (budget or cancel)
    arm_tokens: int = 0  # tokens of every sample row of the experiment (the arms' cost)
    judge_tokens: int = 0
    comparisons: int = 0
    elapsed_s: float = 0.0
    base_url: str | None = None
    arms: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


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
    endpoint = agent_run.agents_only_endpoint(spec) or resolve_endpoint(spec)
    counters = counters if counters is not None else RunCounters()
    _check_ledger(spec.ledger, resume)
    state = read_state(spec.ledger, spec.name) if resume else LedgerState()
    run_id = state.run_id or f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"

    async with contextlib.AsyncExitStack() as stack:
        if endpoint.is_sim:
            endpoint.base_url = await stack.enter_async_context(_sim(spec, endpoint))
        provider = Provider(
            wire_api=endpoint.wire_api,
            base_url=endpoint.base_url or "",
            api_key=endpoint.api_key,
            model=endpoint.model,
            timeout_s=spec.timeout_s,
            auth=endpoint.auth,
            max_connections=max(16, spec.concurrency * 2),
        )
        stack.push_async_callback(provider.close)
        writer = stack.enter_context(LedgerWriter(spec.ledger))
        run = _Run(spec, endpoint, tasks, provider, writer, counters, state, run_id, pause, cancel)
        run.shard = shard
        if executables:
            sim_root = endpoint.base_url.removesuffix("/v1") if endpoint.is_sim else None
            endpoints = agent_run.resolve_agent_endpoints(spec, sim_root)
            run.agents = agent_run.AgentSessions(spec, executables, endpoints, run_id, resume)
            counters.agent_sessions = run.agents.live
        return await run.execute()


def _check_ledger(path: Path, resume: bool) -> None:
    if resume:
        return
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size > 0:
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
        self.judge_tokens = 0
        self.rng = random.Random(spec.seed)
        self.task_by_id = {t.task_id: t for t in tasks}
        self.tests_gate = asyncio.Semaphore(2)
        self.slots = asyncio.Semaphore(spec.concurrency)
        self.agents: agent_run.AgentSessions | None = None
        self.shard: Shard | None = None

    # ----------------------------------------------------------------------------- phases
    async def execute(self) -> RunResult:
        started = time.monotonic()
        c = self.counters
        c.concurrency = self.spec.concurrency
        c.budget_tokens = self.spec.max_total_tokens
        groups = sum(1 for _ in self._groups())
        for arm in self.spec.arms:
            c.arm(arm.name).planned = groups * arm.n
        for row in self.state.sample_rows:
            c.apply_row(row)
        self.result.resumed_calls = len(self.state.finals)
        try:
            await self._sample_all()
            if self.result.stopped != "cancelled":
                await self._judge_all()
        finally:
            c.finished = True
            c.in_flight = 0
            self.result.elapsed_s = time.monotonic() - started
        return self.result

    def _groups(self) -> Iterator[tuple[Task, int]]:
        """The (task, session) pairs this invocation runs (all of them unless sharded)."""
        for t, task in enumerate(self.tasks):
            for session in range(self.spec.sessions):
                if self._owns(t, session):
                    yield task, session

    def _owns(self, t: int, session: int) -> bool:
        return self.shard is None or self.shard.owns(t)  # a task's sessions stay together

    def _pending(self) -> Iterator[_Call]:
        for t, task in enumerate(self.tasks):
            for arm in self.spec.arms:
                for session in range(self.spec.sessions):
                    if not self._owns(t, session):
                        continue
                    for sample in range(arm.n):
                        key = (task.task_id, arm.name, session, sample)
                        if key not in self.state.finals:
                            yield _Call(task, arm, session, sample)

    async def _sample_all(self) -> None:
        pending = self._pending()

        async def worker() -> None:
            for call in pending:
                if self._stopping():
                    return
                await self._sample(call)

        workers = [asyncio.create_task(worker()) for _ in range(self.spec.concurrency)]
        gathered = asyncio.gather(*workers)
        waiters: set[asyncio.Future] = {gathered}
        cancel_wait = asyncio.ensure_future(self.cancel.wait()) if self.cancel else None
        if cancel_wait is not None:
            waiters.add(cancel_wait)
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if self.cancel is not None and self.cancel.is_set() and not gathered.done():
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                self.result.stopped = "cancelled"
            else:
                gathered.result()  # a bug in a worker surfaces here
        finally:
            if cancel_wait is not None:
                cancel_wait.cancel()
            if not gathered.done():
                gathered.cancel()
        if self.cancel is not None and self.cancel.is_set():
            self.result.stopped = "cancelled"
        elif self.budget_hit:
            self.result.stopped = "budget"
        self.state = read_state(self.spec.ledger, self.spec.name)
        self.result.not_run = sum(1 for _ in self._pending())

    async def _sample(self, call: _Call) -> None:
        arm = call.arm
        if arm.kind == "agent":
            await self._agent_session(call)
            return
        key = (call.task.task_id, arm.name, call.session, call.sample)
        fields = {
            "task_id": call.task.task_id,
            "arm": arm.name,
            "session": call.session,
            "sample": call.sample,
            "round": 0,
            "role": "sample",
        }
        seed = zlib.crc32(
            f"{self.spec.seed}|{call.task.task_id}|{arm.name}|{call.session}|{call.sample}".encode()
        )
        await self._call_with_retries(
            fields,
            call.task.prompt,
            max_tokens=arm.max_tokens,
            temperature=arm.temperature,
            seed=seed,
            first_attempt=self.state.next_attempt.get(key, 1),
            task=call.task,
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

            key = (call.task.task_id, arm, call.session, call.sample)
            try:
                rows = await self.agents.run(
                    call.task, call.arm, call.session, call.sample,
                    attempt=self.state.next_attempt.get(key, 1), on_progress=progress,
                )  # fmt: skip
            finally:
                c.in_flight -= 1
                c.settle_estimate(arm, shown)
        for row in rows:
            self.writer.append(row)
            c.apply_row(row)
            self.result.attempts += 1

    def cancel_is_set(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    # ----------------------------------------------------------------------------- one call
    def _stopping(self) -> bool:
        if self.cancel is not None and self.cancel.is_set():
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
    ) -> dict[str, Any] | None:
        """Make one logical call; every attempt is a ledger row. None if never made (stop)."""
        role = fields["role"]
        arm = fields["arm"]
        c = self.counters
        attempt = first_attempt
        headers = None
        if self.endpoint.is_sim:
            headers = {
                "x-sim-sample": f"{fields['arm']}|{fields['session']}|{fields['sample']}|{fields['round']}"
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
                    res = await self.provider.call(
                        prompt,
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
            row = self._row(fields, res, attempt, max_tokens, temperature, model)
            if res.status == "ok" and role == "sample":
                await self._score(row, task)
            retry = (
                res.status == "error"
                and res.error_class in RETRYABLE
                and attempt < self.spec.retry.max_attempts
                and not self._stopping()
            )
            if retry:
                row["will_retry"] = True
            self.writer.append(row)
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

    def _backoff(self, attempt: int, res: CallResult) -> float:
        r = self.spec.retry
        if res.retry_after_s is not None:
            wait = min(res.retry_after_s, r.retry_after_cap_s)
            return wait + self.rng.uniform(0, 0.1 * wait + 0.05)
        step = min(r.cap_s, r.base_s * (2 ** (attempt - 1)))
        return step / 2 + self.rng.uniform(0, step / 2)

    def _row(
        self,
        fields: dict[str, Any],
        res: CallResult,
        attempt: int,
        max_tokens: int,
        temperature: float,
        model: str | None,
    ) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "experiment": self.spec.name,
            **fields,
            "model": model or self.endpoint.model,
            "profile": self.endpoint.profile,
            "base_url": self.endpoint.base_url,
            "wire_api": self.endpoint.wire_api,
            **res.ledger_fields(),
            "attempt": attempt,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "ts": time.time(),
        }

    async def _score(self, row: dict[str, Any], task: Task) -> None:
        kind = self.spec.judge.kind
        content = row.get("content") or ""
        use_tests = kind == "tests" or (
            kind in ("auto", "llm") and task.tests and task.answer is None
        )
        if use_tests and task.tests:
            async with self.tests_gate:
                verdict = await asyncio.to_thread(
                    judge_tests,
                    content,
                    task.tests,
                    timeout_s=self.spec.judge.timeout_s,
                    memory_mb=self.spec.judge.memory_mb,
                )
        elif task.answer is not None:
            j = self.spec.judge
            verdict = judge_rule(
                content, task.answer, mode=j.mode, tolerance=j.tolerance, pattern=j.pattern
            )
        else:
            return
        row["score"] = verdict.score
        row["passed"] = verdict.passed

    # ----------------------------------------------------------------------------- judging
    async def _judge_all(self) -> None:
        finals = self.state.finals
        results: list[ArmResult] = []
        knockouts = []
        for task in self.tasks:
            for arm in self.spec.arms:
                for session in range(self.spec.sessions):
                    rows = [finals.get((task.task_id, arm.name, session, i)) for i in range(arm.n)]
                    if any(r is None for r in rows):
                        continue  # incomplete (stopped early): not judged
                    result = self._select(task, arm, session, rows)  # type: ignore[arg-type]
                    results.append(result)
                    if arm.select == "judge" and result.samples_ok > 1:
                        knockouts.append(self._knockout(task, arm, session, rows, result))  # type: ignore[arg-type]
        if knockouts:
            await asyncio.gather(*knockouts)
        if self.spec.judge.kind != "llm" and results and all(r.score is None for r in results):
            self.result.warnings.append(
                "no sample could be scored (the tasks have neither answer nor tests): "
                'set kind = "llm" in [judge] to compare the arms with an LLM judge'
            )
        if self.spec.judge.kind == "llm":
            comparisons = await self._llm_comparisons(results)
        else:
            comparisons = score_comparisons(results, [a.name for a in self.spec.arms])
        if self.cancel is not None and self.cancel.is_set():
            self.result.stopped = "cancelled"  # judge calls were cut short: write nothing
            return
        self.result.results_path = self.spec.results_path()
        self.result.comparisons_path = self.spec.comparisons_path()
        write_results(self.result.results_path, results)
        self.result.comparisons = write_comparisons(self.result.comparisons_path, comparisons)
        if self.budget_hit and self.result.stopped == "completed":
            self.result.stopped = "budget"
        self._arm_stats()

    def _select(self, task: Task, arm: ArmSpec, session: int, rows: list[dict]) -> ArmResult:
        ok = [(i, r) for i, r in enumerate(rows) if agent_run.judgeable(r)]
        result = ArmResult(task.task_id, arm.name, session, None, None, None, None, len(ok), arm.n)
        if not ok:
            return result
        if arm.kind == "self_consistency":
            answers = [extract_answer(r.get("content")) for _, r in ok]
            index, _ = majority(answers)
            chosen = ok[index if index is not None else 0]
        elif arm.kind in ("best_of_n", "agent") and arm.select == "verifier":
            chosen = max(ok, key=lambda item: (_score_of(item[1]), -item[0]))
        else:  # single, or judge selection (refined by the knockout)
            chosen = ok[0]
        self._fill(result, chosen)
        return result

    @staticmethod
    def _fill(result: ArmResult, chosen: tuple[int, dict]) -> None:
        index, row = chosen
        result.selected_sample = index
        result.content = row.get("content")
        result.answer = extract_answer(row.get("content"))
        score = row.get("score")
        result.score = float(score) if isinstance(score, (int, float)) else None
        passed = row.get("passed")
        result.passed = bool(passed) if passed is not None else None

    async def _knockout(
        self, task: Task, arm: ArmSpec, session: int, rows: list[dict], result: ArmResult
    ) -> None:
        """Pick a sample by single-elimination matches, each judged in both orders."""
        alive = [i for i, r in enumerate(rows) if r.get("status") == "ok"]
        match = 0
        while len(alive) > 1:
            pairs = list(zip(alive[0::2], alive[1::2], strict=False))
            matches = []
            for x, y in pairs:
                matches.append(
                    self._match(
                        task, arm.name, session, match, rows[x]["content"], rows[y]["content"]
                    )
                )
                match += 1
            prefs = await asyncio.gather(*matches)
            winners = [x if pref >= 0.5 else y for (x, y), pref in zip(pairs, prefs, strict=True)]
            if len(alive) % 2:
                winners.append(alive[-1])
            alive = winners
        self._fill(result, (alive[0], rows[alive[0]]))

    async def _match(
        self, task: Task, arm: str, session: int, match: int, content_x: str, content_y: str
    ) -> float:
        """Preference for X over Y: both orders judged, averaged (0.5 = tie)."""
        verdicts = await asyncio.gather(
            self._judge_call(task, arm, session, match, 0, content_x, content_y),
            self._judge_call(task, arm, session, match, 1, content_y, content_x),
        )
        return both_orders(verdicts[0], verdicts[1])

    async def _judge_call(
        self, task: Task, arm: str, session: int, match: int, order: int, a: str, b: str
    ) -> float | None:
        key = (task.task_id, arm, session, match, order)
        row = self.state.judges.get(key)
        if row is None:
            fields = {
                "task_id": task.task_id,
                "arm": arm,
                "session": session,
                "sample": match,
                "round": order,
                "role": "judge",
            }
            j = self.spec.judge
            row = await self._call_with_retries(
                fields,
                judge_prompt(task.task_id, task.prompt, a or "", b or ""),
                max_tokens=j.max_tokens,
                temperature=j.temperature,
                seed=None,
                first_attempt=self.state.judge_next_attempt.get(key, 1),
                task=task,
                model=j.model,
            )
            if row is None:
                self.result.warnings.append(
                    f"judge call not made for {task.task_id} {arm} (stopped)"
                )
                return None
        if row.get("status") != "ok":
            return None
        return parse_verdict(row.get("content"))

    async def _llm_comparisons(self, results: list[ArmResult]) -> list[tuple]:
        by_task: dict[str, dict[str, dict[int, ArmResult]]] = defaultdict(lambda: defaultdict(dict))
        for r in results:
            if r.content is not None:
                by_task[r.task_id][r.arm][r.session] = r
        order = [a.name for a in self.spec.arms]
        jobs = []
        for task_id, arms in by_task.items():
            names = [n for n in order if n in arms]
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    sessions = sorted(set(arms[a]) & set(arms[b]))
                    jobs.append(self._arm_match(task_id, a, b, sessions, arms))
        return [c for c in await asyncio.gather(*jobs) if c is not None]

    async def _arm_match(
        self, task_id: str, a: str, b: str, sessions: list[int], arms
    ) -> tuple | None:  # noqa: ANN001
        task = self.task_by_id[task_id]
        prefs = await asyncio.gather(
            *(
                self._match(
                    task, f"{a} vs {b}", s, 0, arms[a][s].content or "", arms[b][s].content or ""
                )
                for s in sessions
            )
        )
        if not prefs:
            return None
        return (task_id, a, b, sum(prefs) / len(prefs))

    def _arm_stats(self) -> None:
        stats: dict[str, dict[str, Any]] = {}
        for arm in self.spec.arms:
            stats[arm.name] = {
                "arm": arm.name, "kind": arm.kind, "n": arm.n, "select": arm.select,
                "max_tokens": arm.max_tokens, "same_budget": arm.same_budget,
                "calls": 0, "ok": 0, "errors": 0, "length": 0, "tokens": 0,
            }  # fmt: skip
        for (_, arm_name, _, _), row in self.state.finals.items():
            s = stats.get(arm_name)
            if s is None:
                continue
            s["calls"] += 1
            if row.get("status") == "ok":
                s["ok"] += 1
                s["length"] += row.get("finish_reason") == "length"
            else:
                s["errors"] += 1
        for row in self.state.sample_rows:
            s = stats.get(str(row.get("arm")))
            if s is not None:
                s["tokens"] += int(row.get("total_tokens") or 0)
        for s in stats.values():
            s["length_rate"] = s["length"] / s["ok"] if s["ok"] else None
        self.result.arms = list(stats.values())
        self.result.arm_tokens = sum(s["tokens"] for s in stats.values())
        # judge rows already in the ledger after sampling (a resumed run's) + the ones written since
        self.result.judge_tokens = self.state.judge_tokens + self.judge_tokens


def _score_of(row: dict[str, Any]) -> float:
    score = row.get("score")
    return float(score) if isinstance(score, (int, float)) else 0.0
