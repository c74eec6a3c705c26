"""LLM-judge calls of a run: knockouts inside a best_of_n arm and pairwise arm comparisons.

Every match is judged in both orders (``role = "judge"`` rows, ``round`` = the order). A judge
row's ``arm`` is ``"judge"`` (see :mod:`eloledger.judges.rows`: a per-arm sum never takes the
judge's tokens for an arm's), ``judged`` names what it compared. A judge row already in the
ledger (a resumed run) is reused, never asked again. A call that gives no
verdict (failed, or named neither A, B nor TIE) is counted per pair label in the run result's
``judge_no_verdict`` fields; a match lacking a verdict in either order is left out, never a tie.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable

from eloledger.judges.compare import ArmResult
from eloledger.judges.llm import both_orders, judge_request, parse_verdict
from eloledger.judges.rows import judge_fields, pair_arms, verdict_fields
from eloledger.ledger.row import AnyRow, LedgerRow
from eloledger.runner.result import RunResult
from eloledger.runner.selection import fill
from eloledger.runner.spec import ArmSpec, ExperimentSpec
from eloledger.runner.state import LedgerState
from eloledger.tasks import Task

# makes one logical call (retries included) and returns its final row, None if never made
CallFn = Callable[..., Awaitable[LedgerRow | None]]


class LlmJudge:
    def __init__(
        self,
        spec: ExperimentSpec,
        state: LedgerState,
        tasks: list[Task],
        result: RunResult,
        call: CallFn,
    ) -> None:
        self.spec, self.state, self.result, self.call = spec, state, result, call
        self.task_by_id = {t.task_id: t for t in tasks}
        self.skipped = 0  # judge calls never made because the run was stopping

    async def knockout(
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
            # a verdict missing in either order (counted in judge_no_verdict): the first sample stays
            winners = [
                x if pref is None or pref >= 0.5 else y
                for (x, y), pref in zip(pairs, prefs, strict=True)
            ]
            if len(alive) % 2:
                winners.append(alive[-1])
            alive = winners
        fill(result, (alive[0], rows[alive[0]]), task)

    async def comparisons(self, results: list[ArmResult]) -> list[tuple]:
        """``(task_id, a, b, outcome)`` for every pair of arms with an answer on a task."""
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
        self,
        task_id: str,
        a: str,
        b: str,
        sessions: list[int],
        arms: dict[str, dict[int, ArmResult]],
    ) -> tuple | None:
        task = self.task_by_id[task_id]
        prefs = await asyncio.gather(
            *(
                self._match(
                    task,
                    f"{a} vs {b}",
                    s,
                    0,
                    arms[a][s].content or "",
                    arms[b][s].content or "",
                    pair=(a, b),
                )
                for s in sessions
            )
        )
        judged = [p for p in prefs if p is not None]
        if not judged:
            return None
        return (task_id, a, b, sum(judged) / len(judged))

    async def _match(
        self,
        task: Task,
        arm: str,
        session: int,
        match: int,
        content_x: str,
        content_y: str,
        pair: tuple[str, str] | None = None,
    ) -> float | None:
        """Preference for X over Y: both orders judged, averaged (0.5 = tie; None = no verdict).
        ``pair``: the two arms X and Y answered for (None in a knockout inside one arm)."""
        verdicts = await asyncio.gather(
            self._judge_call(task, arm, session, match, 0, content_x, content_y, pair),
            self._judge_call(task, arm, session, match, 1, content_y, content_x, pair),
        )
        return both_orders(verdicts[0], verdicts[1])

    async def _judge_call(
        self,
        task: Task,
        arm: str,
        session: int,
        match: int,
        order: int,
        a: str,
        b: str,
        pair: tuple[str, str] | None = None,
    ) -> float | None:
        key = (task.task_id, arm, session, match, order)
        row: AnyRow | None = self.state.judges.get(key)
        if row is None:
            fields = judge_fields(task.task_id, arm, session, match, order)
            j = self.spec.judge
            req = judge_request(task.task_id, task.prompt, a or "", b or "")
            if req.flags:  # answers that speak to the judge, flagged on its row
                fields["judge_flags"] = list(req.flags)
            row = await self.call(
                fields,
                req.user,
                system=req.system,
                max_tokens=j.max_tokens,
                temperature=j.temperature,
                seed=None,
                first_attempt=self.state.judge_next_attempt.get(key, 1),
                task=task,
                model=j.model,
                annotate=lambda r: r.update(
                    verdict_fields(pair, order, parse_verdict(r.get("content")))
                ),
            )
            if row is None:
                self.skipped += 1  # stopped (budget, errors): reported once, counted
                return None
        verdict = parse_verdict(row.get("content")) if row.get("status") == "ok" else None
        self._count_verdict(arm, verdict)
        return verdict

    def _count_verdict(self, label: str, verdict: float | None) -> None:
        """Judge calls consulted and those without a verdict, per pair/arm label."""
        r = self.result
        r.judge_verdict_calls += 1
        if verdict is not None:
            return
        r.judge_no_verdict_pairs[label] = r.judge_no_verdict_pairs.get(label, 0) + 1
        for arm in pair_arms(label):
            r.judge_no_verdict[arm] = r.judge_no_verdict.get(arm, 0) + 1
