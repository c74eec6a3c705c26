"""Four-arm ledgers with known truth for the fairness rule's studies and tests.

:func:`eloledger.budget.sampling_sim.four_arms` draws every sample independently at a fixed cost.
Real designs differ in two ways this generator adds, because the rule's error rates depend on
them: a method whose samples agree with each other (low diversity: it gains at n=1 and loses
at N, since drawing more of the same answer buys little), and per-sample token counts that
vary (``jitter``: +-20% is usual for free-form answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from eloledger.budget.sampling_sim import _row


def four_arm_design(
    *,
    p_old: float = 0.5,
    p_new: float = 0.5,
    n_old: int = 4,
    n_new: int = 4,
    tokens_old: float = 1000.0,
    tokens_new: float = 1000.0,
    tasks: int = 100,
    repeats: int = 1,
    spread: float = 1.0,
    jitter: float = 0.0,
    agree_new: float = 0.0,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """old_1/new_1 (``repeats`` single samples per task) and old_n/new_n (``repeats`` sessions
    of n_old/n_new samples), as :func:`~eloledger.budget.sampling_sim.four_arms`, plus:

    * ``agree_new``: each sample of the new method repeats the task's own fixed answer of that
      method (right with the task's pass probability) with this probability, else is a fresh
      draw; 1.0 is a deterministic method, whose pass@N equals its pass@1;
    * ``jitter``: each sample's tokens are its method's cost times U(1 - jitter, 1 + jitter).
    """
    rng = np.random.default_rng(seed)
    logit = np.log([p_old / (1 - p_old), p_new / (1 - p_new)])
    plan = (
        ("old_1", 0, 1, tokens_old),
        ("new_1", 1, 1, tokens_new),
        ("old_n", 0, n_old, tokens_old),
        ("new_n", 1, n_new, tokens_new),
    )
    rows: list[dict[str, Any]] = []
    for t in range(tasks):
        difficulty = float(rng.normal(0.0, spread))
        p = 1.0 / (1.0 + np.exp(-(logit + difficulty)))
        fixed = bool(rng.random() < p[1])  # the new method's own answer to this task
        for arm, method, n, cost in plan:
            for s in range(repeats):
                for k in range(n):
                    if method == 1 and rng.random() < agree_new:
                        passed = fixed
                    else:
                        passed = bool(rng.random() < p[method])
                    tokens = cost * (1.0 + jitter * float(rng.uniform(-1.0, 1.0)))
                    rows.append(
                        _row(t, arm, s, k, int(round(tokens)), passed=passed, score=float(passed))
                    )
    return rows


Groups = tuple[tuple[int, tuple[int, int]], ...]  # (tasks, (samples, passing)) in task order


def _ledger(arms: Sequence[tuple[str, int, str, Groups]]) -> list[dict[str, Any]]:
    """One session per task for each (arm, tokens per sample, model, groups): the groups give,
    task after task, each session's samples and how many of them pass (those first)."""
    rows = []
    for arm, tokens, model, groups in arms:
        per_task = [outcome for count, outcome in groups for _ in range(count)]
        for t, (n, c) in enumerate(per_task):
            for k in range(n):
                rows.append(_row(t, arm, 0, k, tokens, passed=k < c, score=float(k < c),
                                 run_id="guide-example", model=model))  # fmt: skip
    return rows


def guide_leakage_example() -> list[dict[str, Any]]:
    """The guide's leakage example as a ledger: 200 tasks, one session each; n=1 delta -3 pp
    (new wins 15 tasks the old loses, loses 21 it wins: 95% CI about -9 to +3 pp); old_n draws
    2 samples at 1,000 tokens, new_n 11 at 978 (5.38x the tokens) and gains +28.5 pp at N;
    at old_n's budget (2.05 of new_n's samples) nothing is gained. The N-way groups: 90 tasks
    both always solve; 57 new_n solves once in 11 and old_n never; 20 old_n solves once in 2
    and new_n 3 times in 11; 33 neither solves."""
    return _ledger([
        ("old_1", 1000, "m-old", ((60, (1, 1)), (21, (1, 1)), (15, (1, 0)), (104, (1, 0)))),
        ("new_1", 1000, "m-new", ((60, (1, 1)), (21, (1, 0)), (15, (1, 1)), (104, (1, 0)))),
        ("old_n", 1000, "m-old", ((90, (2, 2)), (57, (2, 0)), (20, (2, 1)), (33, (2, 0)))),
        ("new_n", 978, "m-new", ((90, (11, 11)), (57, (11, 1)), (20, (11, 3)), (33, (11, 0)))),
    ])  # fmt: skip


def guide_decision_example() -> list[dict[str, Any]]:
    """The guide's example decision as a ledger: 200 tasks, one session each; at n=1 the
    candidate solves 38 tasks the baseline fails and fails 16 it solves: delta 0.11, 95% CI
    about [0.04, 0.18], at 410 tokens a call against 400; best-of-4 keeps the gain (+0.14)."""
    return _ledger([
        ("baseline_1", 400, "m-base", ((70, (1, 1)), (16, (1, 1)), (38, (1, 0)), (76, (1, 0)))),
        ("candidate_1", 410, "m-cand", ((70, (1, 1)), (16, (1, 0)), (38, (1, 1)), (76, (1, 0)))),
        ("baseline_4", 400, "m-base", ((110, (4, 2)), (10, (4, 0)), (28, (4, 0)), (52, (4, 0)))),
        ("candidate_4", 410, "m-cand", ((110, (4, 3)), (10, (4, 0)), (28, (4, 2)), (52, (4, 0)))),
    ])  # fmt: skip
