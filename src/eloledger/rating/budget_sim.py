"""Synthetic ledgers with known answers, for budget-curve and fairness tests and benchmarks.

Kept in the package (not in tests) so the benchmark and the tests build the same data. All
generators are deterministic for a given seed and return canonical ledger row dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def sampling_sessions(
    *,
    arms: Sequence[str] = ("iid",),
    tasks: int = 30,
    sessions: int = 6,
    samples: int = 16,
    tokens_per_sample: int = 1000,
    jitter: float = 0.0,
    stall_after: dict[str, int] | None = None,
    arm_task_sd: float = 0.0,
    levels: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Sessions of independent samples with i.i.d. continuous scores (plus a task effect).

    ``arm_task_sd``: each (task, arm) gets its own offset ~ N(0, sd), mean zero -- arms that
    differ task by task but not on average (their population Elo at equal budgets is equal),
    which only a task-level bootstrap sees. ``levels``: scores rounded to that many levels
    (``2``: pass/fail at score > 0), for ties as real graders give them.

    ``stall_after[arm] = j``: that arm's samples after the j-th are no better than its first j
    (they repeat the worst of them), so its best-so-far stops improving -- an arm that slows
    down. ``jitter`` spreads tokens per sample uniformly by +-jitter (relative).
    """
    rng = np.random.default_rng(seed)
    stall_after = stall_after or {}
    rows: list[dict[str, Any]] = []
    for t in range(tasks):
        task_effect = float(rng.normal())
        for arm in arms:
            offset = float(rng.normal(0.0, arm_task_sd)) if arm_task_sd else 0.0
            for s in range(sessions):
                seen: list[float] = []
                for k in range(samples):
                    score = task_effect + offset + float(rng.normal())
                    if levels is not None:
                        score = _level(score, levels)
                    limit = stall_after.get(arm)
                    if limit is not None and k >= limit:
                        score = min(seen[:limit])
                    seen.append(score)
                    tokens = tokens_per_sample * (1.0 + jitter * float(rng.uniform(-1, 1)))
                    rows.append(_row(t, arm, s, k, int(round(tokens)), score=score))
    return rows


def four_arms(
    *,
    p_old: float = 0.5,
    p_new: float = 0.5,
    n_old: int = 4,
    n_new: int = 4,
    tokens_old: int = 1000,
    tokens_new: int = 1000,
    tasks: int = 60,
    repeats: int = 4,
    spread: float = 1.0,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """The four-arm fairness design: old_1/new_1 (single samples, ``repeats`` per task) and
    old_n/new_n (``repeats`` sessions of n_old / n_new samples per task).

    Each task has a difficulty; a sample of the old method passes with probability ``p_old``
    on an average task (``p_new`` for the new method), logit-shifted by the difficulty.
    ``tokens_*`` is the cost of one sample of each method.
    """
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    logit = np.log([p_old / (1 - p_old), p_new / (1 - p_new)])
    plan = (
        ("old_1", 0, 1, tokens_old),
        ("new_1", 1, 1, tokens_new),
        ("old_n", 0, n_old, tokens_old),
        ("new_n", 1, n_new, tokens_new),
    )
    for t in range(tasks):
        difficulty = float(rng.normal(0.0, spread))
        for arm, method, n, tokens in plan:
            p = 1.0 / (1.0 + np.exp(-(logit[method] + difficulty)))
            for s in range(repeats):
                for k in range(n):
                    passed = bool(rng.random() < p)
                    rows.append(_row(t, arm, s, k, int(tokens), passed=passed, score=float(passed)))
    return rows


def round_robin(truth: dict[str, float], tasks: int, rng: np.random.Generator) -> list[tuple]:
    """(task, a, b, outcome) rows: every pair of players meets once a task, a winning with the
    Bradley–Terry probability of the true Elo gap (for rating tests with known truth)."""
    names = list(truth)
    out = []
    for t in range(tasks):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                p = 1.0 / (1.0 + 10 ** ((truth[b] - truth[a]) / 400))
                out.append((f"t{t}", a, b, float(rng.random() < p)))
    return out


def _level(score: float, levels: int) -> float:
    """A continuous score cut into ``levels`` ordered grades (2 = fail/pass at 0)."""
    if levels == 2:
        return 1.0 if score > 0 else 0.0
    cuts = np.linspace(-2.0, 2.0, levels - 1)
    return float(np.searchsorted(cuts, score)) / (levels - 1)


def _row(t: int, arm: str, s: int, k: int, tokens: int, **scores: Any) -> dict[str, Any]:
    """Sample ``k`` of session ``s`` of ``arm`` on task ``t``: a successful call, server usage."""
    return {
        "task_id": f"task{t:03d}",
        "arm": arm,
        "session": f"{arm}-{t}-{s}",
        "sample": k,
        "role": "sample",
        "status": "ok",
        "usage_source": "server",
        "total_tokens": tokens,
        **scores,
    }
