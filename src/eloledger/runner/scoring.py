"""Score one sample as it arrives, so ``score``/``passed`` live on its ledger row.

The task's own check decides: its tests (run in a subprocess, at most two at a time) when the
spec asks for tests or the task has tests and no answer, else the rule judge against its answer.
Open-ended tasks (prompt only) get no score: an LLM judge compares them later.
"""

from __future__ import annotations

import asyncio

from eloledger.judges.code import judge_tests
from eloledger.judges.rule import Verdict, judge_rule
from eloledger.judges.scorer import is_scored, judge_scored
from eloledger.ledger.row import LedgerRow
from eloledger.runner.spec import JudgeSpec
from eloledger.tasks import Task


async def score_sample(
    row: LedgerRow, task: Task, judge: JudgeSpec, tests_gate: asyncio.Semaphore
) -> Verdict | None:
    """Set ``score`` and ``passed`` on an ok sample row (nothing for open-ended tasks); the
    verdict is returned for its detail (a refine arm quotes a test failure back)."""
    content = row.get("content") or ""
    use_tests = judge.kind == "tests" or (
        judge.kind in ("auto", "llm") and task.tests and task.answer is None
    )
    if use_tests and task.tests:
        async with tests_gate:
            verdict = await asyncio.to_thread(
                judge_tests,
                content,
                task.tests,
                timeout_s=judge.timeout_s,
                memory_mb=judge.memory_mb,
                sandbox_kind=judge.sandbox,
            )
        row.sandbox = verdict.sandbox  # what the judged code ran in
    elif is_scored(task):  # the task's scorer, on the reply's text, in the sandbox
        async with tests_gate:
            verdict = await asyncio.to_thread(
                judge_scored, content, task, answer=True, timeout_s=judge.timeout_s,
                memory_mb=judge.memory_mb, sandbox_kind=judge.sandbox,
            )  # fmt: skip
        row.sandbox, row.direction = verdict.sandbox, task.direction
    elif task.answer is not None:
        verdict = judge_rule(
            content, task.answer, mode=judge.mode, tolerance=judge.tolerance, pattern=judge.pattern
        )
    else:
        return None
    row.score = verdict.score
    row.passed = verdict.passed
    return verdict
