"""Synthetic ledgers with known answers, for budget-curve and fairness tests and benchmarks.

Kept in the package (not in tests) so the benchmark and the tests build the same data. All
generators are deterministic for a given seed and return canonical ledger row dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from eloledger.ledger.row import LedgerRow


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


def _row(t: int, arm: str, s: int, k: int, tokens: int, **fields: Any) -> dict[str, Any]:
    """Sample ``k`` of session ``s`` of ``arm`` on task ``t``: a successful call, server usage,
    and ``fields`` (its scores): built as a ledger row, handed over as a reader would."""
    return LedgerRow(
        task_id=f"task{t:03d}",
        arm=arm,
        session=f"{arm}-{t}-{s}",
        sample=k,
        role="sample",
        status="ok",
        usage_source="server",
        total_tokens=tokens,
        **fields,
    ).to_dict()


COT_ELO = {"base": 0.0, "cot": 60.0, "cot_long": 100.0}  # true Elo over "base"
COT_TOKENS = {"base": 1.0, "cot": 1.25, "cot_long": 1.5}  # tokens, times base's
_TASK_SD, _SESSION_SD, _BASE_TOKENS = 0.6, 0.3, 1000.0


def cot_arms(tasks: int, seed: int, games: int = 4) -> tuple[list[tuple], dict[str, Any]]:
    """Arms that spend within 1-1.5x of each other's tokens (the chain-of-thought case):
    (task, a, b, outcome) rows -- ``games`` Bradley-Terry games per pair per task at the
    true Elo gaps of ``COT_ELO`` -- and per-arm costs with per-task tokens (one session a
    task: the task's length, lognormal, times the arm's factor, times lognormal session
    noise). The true mean tokens per task: :func:`cot_true_tokens`."""
    rng = np.random.default_rng(seed)
    names = list(COT_ELO)
    rows = []
    spent: dict[str, dict[str, float]] = {a: {} for a in names}
    for t in range(tasks):
        task = f"t{t:03d}"
        length = _BASE_TOKENS * float(np.exp(_TASK_SD * rng.standard_normal()))
        for a in names:
            noise = float(np.exp(_SESSION_SD * rng.standard_normal()))
            spent[a][task] = length * COT_TOKENS[a] * noise
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                p = 1.0 / (1.0 + 10 ** ((COT_ELO[b] - COT_ELO[a]) / 400))
                rows.extend((task, a, b, float(rng.random() < p)) for _ in range(games))
    costs = {
        a: {"tokens_per_task": float(np.mean(list(spent[a].values()))),
            "per_task_tokens": spent[a], "per_task_sessions": dict.fromkeys(spent[a], 1)}
        for a in names
    }  # fmt: skip
    return rows, costs


def cot_true_tokens(arm: str) -> float:
    """The population mean tokens per task of a :func:`cot_arms` arm."""
    return _BASE_TOKENS * COT_TOKENS[arm] * float(np.exp((_TASK_SD**2 + _SESSION_SD**2) / 2))
