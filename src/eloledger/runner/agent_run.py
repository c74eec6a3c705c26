"""Agent arms inside a run: check them before anything starts, then run one session per call.

A call of an agent arm is one whole session (``sample`` numbers the arm's ``n`` independent
sessions of a task, so best-of-n picks among whole sessions). It is the unit of ``--resume``:
a session with a row in the ledger is never run again, one without is run from scratch.
Every model call of a session goes through the run's meter (:mod:`eloledger.meter`, started
with the first session, stopped by :meth:`AgentSessions.close`) and becomes one ledger row of
``role = "call"`` (tokens from the gateway's answer, latency, status, ``model`` asked for and
``model_answered``). The session then writes one row (``role = "sample"``, what rating reads):
its tokens are the sum of its calls (``usage_source = "server"``, or ``"estimated"`` when a
call's answer carried no usage), checked against the CLI's final report and session log
(``usage_check``), with the verdict, or an error row with its class (auth, max_turns, timeout,
crash, api). Call rows are never counted again on top of their session's row.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from eloledger.agents.events import SessionState
from eloledger.agents.usage import CallUsage
from eloledger.errors import UserError
from eloledger.judges.scorer import is_scored
from eloledger.ledger.row import LedgerRow
from eloledger.meter import Meter, session_usage
from eloledger.runner.agent_clis import (
    HEADLESS,
    INSTALL_HINT,
    find_cli,
    unknown_flag,
)
from eloledger.runner.agent_crosscheck import cross_check, read_log_usage

__all__ = ["AgentSessions", "SessionState", "agents_only_endpoint", "check_agent_arms"]
from eloledger.runner.agent_session import (
    METER_LOG,
    AgentJob,
    SessionOutcome,
    run_agent_session,
)
from eloledger.runner.checkpoints import finalize
from eloledger.runner.resolve import SIM_DEFAULT_MODEL, SIM_PROFILE, Endpoint
from eloledger.runner.spec import ArmSpec, ExperimentSpec, _sibling, spec_line
from eloledger.safetree import remove_tree
from eloledger.tasks import Task

WIRE_OF = {"claude-code": "anthropic", "codex": "openai-responses", "gemini-cli": "gemini"}
_CONTENT_KEEP = 8000


def agent_arms(spec: ExperimentSpec) -> list[tuple[int, ArmSpec]]:
    return [(i, a) for i, a in enumerate(spec.arms) if a.kind == "agent"]


def check_agent_arms(spec: ExperimentSpec) -> dict[str, Path]:
    """Each agent arm's CLI executable; a ``spec.toml:LINE`` error for what cannot run."""
    found: dict[str, Path] = {}
    for index, arm in agent_arms(spec):
        a = arm.agent
        assert a is not None
        module = HEADLESS[a.agent]
        if a.effort is not None and a.effort not in module.EFFORTS:
            choices = ", ".join(module.EFFORTS) or "none: remove effort"
            raise UserError(
                f"{spec_line(spec, 'arms', 'effort', index)}: {a.agent} has no effort {a.effort!r}",
                fix=f"use one of {choices}",
            )
        if a.agent == "codex" and a.max_turns is not None:
            raise UserError(
                f"{spec_line(spec, 'arms', 'max_turns', index)}: codex exec has no turn limit",
                fix="remove max_turns from this arm (bound it with timeout_s instead)",
            )
        executable = find_cli(a.agent)
        if executable is None:
            raise UserError(
                f"{spec_line(spec, 'arms', 'agent', index)}: arm {arm.name!r} needs the "
                f"{module.BINARY!r} CLI ({a.agent}), which is not installed",
                fix=INSTALL_HINT + " (or set ELOLEDGER_CLIENTS_DIR)",
            )
        bad = unknown_flag(a.agent, executable, a.args)
        if bad is not None:
            raise UserError(
                f"{spec_line(spec, 'arms', 'args', index)}: {module.BINARY} has no flag {bad!r} "
                f"({executable})",
                fix="remove it, or update the CLI with " + INSTALL_HINT,
            )
        found[arm.name] = executable
    return found


@dataclass
class AgentEndpoint:
    root_url: str
    api_key: str
    model: str | None
    profile: str
    auth: str = "x-api-key"


def resolve_agent_endpoints(spec: ExperimentSpec, sim_root: str | None) -> dict[str, AgentEndpoint]:
    """Per agent arm: the gateway URL its CLI is given, the key and the model."""
    out: dict[str, AgentEndpoint] = {}
    for index, arm in agent_arms(spec):
        a = arm.agent
        assert a is not None
        if sim_root is not None:
            key = spec.sim.api_key or "sim"
            model = a.model or spec.model or SIM_DEFAULT_MODEL
            out[arm.name] = AgentEndpoint(sim_root, key, model, "sim")
            continue
        from eloledger.profiles.store import get_profile, resolve_key

        profile = get_profile(spec.profile)
        client = a.agent  # an agent arm's CLI is the profile client of the same name
        key = resolve_key(profile)
        if not key:
            raise UserError(
                f"{spec_line(spec, 'experiment', 'profile')}: profile {profile.name!r} has no key "
                f"for agent arm {arm.name!r}",
                fix="eloledger profile edit (or export the profile's key variable)",
            )
        model = a.model or profile.client_model(client) or spec.model
        if not model:
            raise UserError(
                f"{spec_line(spec, 'arms', None, index)}: agent arm {arm.name!r} has no model",
                fix='add model = "..." to the arm',
            )
        root = profile.client_base_url(client)
        out[arm.name] = AgentEndpoint(root, key, model, profile.name, profile.auth)
    return out


class AgentSessions:
    """Runs the sessions of a spec's agent arms and turns each into its ledger row."""

    def __init__(
        self,
        spec: ExperimentSpec,
        executables: dict[str, Path],
        endpoints: dict[str, AgentEndpoint],
        run_id: str,
        resume: bool = False,
    ) -> None:
        self.spec, self.executables, self.endpoints = spec, executables, endpoints
        self.run_id, self.resume = run_id, resume
        self.evidence_root = _sibling(spec.ledger, ".agents")
        self.live: dict[tuple[str, str, int, int], SessionState] = {}  # sessions running now
        self.overhead: list[tuple[float, float]] = []  # (own CPU s, wall s) per session
        timeout = max((a.agent.timeout_s for _, a in agent_arms(spec) if a.agent), default=600.0)
        self.meter = Meter(timeout_s=timeout + 60)  # one per run: every session's way out

    async def close(self) -> None:
        """Stop the run's meter (the run calls this once, at its end)."""
        await self.meter.aclose()

    def evidence_dir(
        self, task: Task, arm: ArmSpec, session: int, sample: int, attempt: int
    ) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in task.task_id)
        return self.evidence_root / arm.name / f"{safe}.s{session}.n{sample}.a{attempt}"

    async def run(
        self,
        task: Task,
        arm: ArmSpec,
        session: int,
        sample: int,
        attempt: int = 1,
        on_progress: Callable[[SessionState], None] | None = None,
    ) -> list[LedgerRow]:
        """The session's rows: its final row, after an ``interrupted`` one when an earlier
        process died during this session (its evidence is there but no row is)."""
        a = arm.agent
        assert a is not None
        ep = self.endpoints[arm.name]
        rows = []
        evidence = self.evidence_dir(task, arm, session, sample, attempt)
        if evidence.exists() and self.resume:
            rows.append(  # off the loop: it reads the session logs the agent left
                await asyncio.to_thread(
                    self._interrupted, task, arm, session, sample, attempt, ep, evidence
                )
            )
            attempt += 1
            evidence = self.evidence_dir(task, arm, session, sample, attempt)
        await asyncio.to_thread(remove_tree, evidence)  # left by an unrelated earlier ledger
        job = AgentJob(
            agent=a.agent,
            executable=self.executables[arm.name],
            task=task,
            root_url=ep.root_url,
            api_key=ep.api_key,
            model=ep.model,
            max_turns=a.max_turns,
            effort=a.effort,
            args=a.args,
            timeout_s=a.timeout_s,
            evidence_dir=evidence,
            auth=ep.auth,
            headers=self._headers(arm, session, sample, ep),
            judge_timeout_s=self.spec.judge.timeout_s,
            judge_memory_mb=self.spec.judge.memory_mb,
            sandbox=self.spec.judge.sandbox,
            checkpoints=a.checkpoints,
            checkpoint_start=a.checkpoint_start,
            meter=self.meter,
        )
        key = (task.task_id, arm.name, session, sample)
        state = SessionState(agent=a.agent, task_id=task.task_id, arm=arm.name, session=session)
        state.model = ep.model
        self.live[key] = state
        try:
            outcome = await run_agent_session(job, state, on_progress)
        finally:
            self.live.pop(key, None)
        cpu0 = time.process_time()
        row = await asyncio.to_thread(self._row, task, arm, session, sample, ep, outcome)
        row.attempt = attempt
        calls = [msgspec.structs.replace(call.row(), **_identity(row)) for call in outcome.calls]
        marks = (
            await asyncio.to_thread(checkpoint_rows, row, outcome, task, self.spec.ledger)
            if a.checkpoints
            else []
        )
        self.overhead.append((outcome.own_cpu_s + time.process_time() - cpu0, outcome.wall_s))
        return [*rows, *calls, row, *marks]

    def _interrupted(
        self,
        task: Task,
        arm: ArmSpec,
        session: int,
        sample: int,
        attempt: int,
        ep: AgentEndpoint,
        evidence: Path,
    ) -> LedgerRow:
        """A row for a session whose process was killed: the tokens its session log shows
        were billed, so they are counted; ``will_retry`` keeps the session unfinished."""
        a = arm.agent
        assert a is not None
        metered = read_metered(evidence)
        logged = read_log_usage(a.agent, evidence / "home")
        row = LedgerRow(
            run_id=self.run_id, experiment=self.spec.name, task_id=task.task_id,
            arm=arm.name, session=session, sample=sample, round=0,
            role="sample", agent=a.agent, model=ep.model, profile=ep.profile,
            base_url=ep.root_url, wire_api=WIRE_OF[a.agent], status="error",
            error_class="interrupted", attempt=attempt, will_retry=True,
            error="eloledger stopped during this session; it is run again",
            evidence=str(evidence), ts=time.time(),
        )  # fmt: skip
        if metered is not None:  # the meter's record, written as each call ended
            usage, count = metered
            row.update(usage.as_row())
            row.usage_source = "server"
            row.calls = count
        elif logged is not None and logged.calls:
            row.update(logged.total.as_row())
            row.usage_source = "log"
            row.turns = len(logged.calls)
        else:
            row.usage_source = "missing"  # no log reader, or the CLI wrote no log yet
        return row

    @staticmethod
    def _headers(arm: ArmSpec, session: int, sample: int, ep: AgentEndpoint) -> dict[str, str]:
        """The simulator plans a session from its key (same key, same course on a rerun)."""
        if ep.profile != SIM_PROFILE:
            return {}
        return {"x-sim-sample": f"{arm.name}|{session}|{sample}"}

    def _row(
        self,
        task: Task,
        arm: ArmSpec,
        session: int,
        sample: int,
        ep: AgentEndpoint,
        outcome: SessionOutcome,
    ) -> LedgerRow:
        s = outcome.state
        a = arm.agent
        assert a is not None
        logged = read_log_usage(a.agent, outcome.evidence_dir / "home")
        calls = outcome.calls
        check, detail = cross_check(calls, s.final, logged)
        if logged is not None and logged.calls:
            _write_calls(outcome.evidence_dir / "calls.jsonl", logged.calls)
        asked = list(dict.fromkeys(c.model_asked for c in calls if c.model_asked))
        answered = list(dict.fromkeys(c.model_answered for c in calls if c.model_answered))
        row = LedgerRow(
            run_id=self.run_id,
            experiment=self.spec.name,
            task_id=task.task_id,
            arm=arm.name,
            session=session,
            sample=sample,
            round=0,
            role="sample",
            agent=a.agent,
            model=",".join(asked) if asked else s.model,
            model_answered=",".join(answered) if answered else None,
            profile=ep.profile,
            base_url=ep.root_url,
            wire_api=WIRE_OF[a.agent],
            call_id=s.session_id,
        )
        metered, source = session_usage(calls)
        if calls:
            row.update(metered.as_row())  # the meter's: the sum of the session's calls
            row.usage_source = source
            if source == "estimated":
                row.usage_note = "no_usage"
                row.warning = "the gateway sent no usage for some calls: estimated from bytes"
        else:  # no model call went out: whatever the CLI claims, nothing was metered
            row.usage_source = "missing"
            row.warning = "the meter saw no model call in this session"
        row.usage_check = check
        if detail:
            row.usage_check_detail = detail
        row.calls = len(calls)
        if outcome.refused:
            row.meter_refused = outcome.refused  # requests without the session's token
        row.turns = s.turns
        row.tool_calls = s.tool_calls
        row.latency_ms = round(outcome.wall_s * 1000, 1)
        row.status = "ok" if s.error_class is None else "error"
        if s.error_class is not None:
            row.error_class = s.error_class
            row.error = s.error
        row.attempt = 1
        row.max_turns = a.max_turns
        row.content = s.result_text[:_CONTENT_KEEP]
        if outcome.verdict is not None:
            row.score = outcome.verdict.score
            row.passed = outcome.verdict.passed
            row.sandbox = getattr(outcome.verdict, "sandbox", None)
            if is_scored(task):
                row.direction = task.direction
        row.evidence = str(outcome.evidence_dir)
        row.ts = time.time()
        return row


def checkpoint_rows(
    session_row: LedgerRow, outcome: SessionOutcome, task: Task, ledger: Path
) -> list[LedgerRow]:
    """The session's judged snapshots as ``role = "checkpoint"`` rows (the row contract shared
    with the rating side): increasing budgets on the session row's own (metered) count, the last
    one the final folder with the session's own verdict. No token fields: never counted."""
    if outcome.verdict is None:
        return []  # nothing judged the session (an answer-only task, or no tests): no curve
    final_tokens = int(session_row.get("total_tokens") or 0)
    final_turns, final_s = int(session_row.get("turns") or 0), round(outcome.wall_s, 3)
    # each snapshot's budget is the meter's count when it was taken (the session's own scale)
    kept = finalize(
        [m for m, _ in outcome.checkpoints], final_tokens, final_turns, final_s, final_tokens
    )
    verdicts = {id(m): v for m, v in outcome.checkpoints}
    steps = [
        (b.tokens, b.turns, b.seconds, verdicts.get(id(m)), m.path) for m, b in kept
    ] + [(final_tokens, final_turns, final_s, outcome.verdict, outcome.evidence_dir / "work")]
    r = session_row
    return [
        LedgerRow(
            run_id=r.run_id, experiment=r.experiment, role="checkpoint", task_id=r.task_id,
            arm=r.arm, agent=r.agent, model=r.model, session=r.session, sample=r.sample,
            checkpoint=index, final=index == len(steps) - 1,
            budget_tokens=tokens, budget_turns=turns, budget_seconds=seconds,
            score=verdict.score if verdict else None,
            passed=verdict.passed if verdict else None,
            sandbox=getattr(verdict, "sandbox", None),
            snapshot=os.path.relpath(path, ledger.resolve().parent),
            direction=task.direction if is_scored(task) else UNSET,
            ts=time.time(),
        )  # fmt: skip
        for index, (tokens, turns, seconds, verdict, path) in enumerate(steps)
    ]


_IDENTITY = ("run_id", "experiment", "task_id", "arm", "session", "sample", "agent", "profile",
             "base_url", "attempt")  # fmt: skip


def _identity(session_row: LedgerRow) -> dict[str, Any]:
    """The fields a call row shares with its session's row (those it has)."""
    return {k: v for k in _IDENTITY if (v := getattr(session_row, k)) is not UNSET}


def read_metered(evidence: Path) -> tuple[CallUsage, int] | None:
    """The meter's record of a session whose process died (``meter.jsonl``, written by
    eloledger outside the sandbox as each call ended): its sum and call count."""
    import orjson

    path = evidence / METER_LOG
    if not path.is_file():
        return None
    total, count = CallUsage(), 0
    for line in path.read_bytes().splitlines():
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a torn last line
        fields = {k: int(row.get(k) or 0) for k in CallUsage.__dataclass_fields__}
        total, count = total + CallUsage(**fields), count + 1
    return (total, count) if count else None


def _write_calls(path: Path, rows: list[LedgerRow]) -> None:
    """The session log's calls as the log tells them (evidence, not ledger rows: no time
    stamped on a call the log gave none)."""
    with open(path, "wb") as fh:
        fh.write(b"".join(msgspec.json.encode(row) + b"\n" for row in rows))


def agents_only_endpoint(spec: ExperimentSpec) -> Endpoint | None:
    """A spec whose arms are all agents needs no chat endpoint (nor an experiment model);
    only an LLM judge would, and then the regular resolution applies."""
    if not spec.arms or any(a.kind != "agent" for a in spec.arms) or spec.judge.kind == "llm":
        return None
    is_sim = spec.profile == SIM_PROFILE
    return Endpoint(
        profile=spec.profile,
        wire_api=spec.wire_api or "openai-responses",
        model=spec.model or "",
        base_url=None,
        api_key=None,
        is_sim=is_sim,
    )


def _runs_code(spec: ExperimentSpec, tasks: list[Task]) -> bool:
    """Whether this run executes untrusted code: a tests judge, or an agent CLI."""
    if any(a.kind == "agent" for a in spec.arms):
        return True
    kind = spec.judge.kind
    return any(t.tests and (kind == "tests" or (kind != "rule" and t.answer is None)) for t in tasks)


def check_sandbox(spec: ExperimentSpec, tasks: list[Task], executables: dict[str, Path]) -> None:
    """Refuse, with one line naming the fix, a run that would execute untrusted code where no
    sandbox can be made, unless the spec says ``[judge] sandbox = "none"``."""
    from eloledger import sandbox

    if not _runs_code(spec, tasks):
        return
    try:
        sandbox.resolve(spec.judge.sandbox)
    except UserError as exc:
        raise UserError(
            f"{spec_line(spec, 'judge', 'sandbox')}: {exc.message}", fix=exc.fix
        ) from None


def sandbox_warnings(spec: ExperimentSpec) -> list[str]:
    """The loud line every report carries when judged code ran without a sandbox."""
    if spec.judge.sandbox != "none":
        return []
    return [
        'UNSANDBOXED: [judge] sandbox = "none": judged code and agent CLIs ran as you, with '
        "your files, network and processes in reach; scores can be forged (sandbox = \"none\" "
        "on every judged row)"
    ]
