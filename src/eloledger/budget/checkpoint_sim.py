"""Agent sessions with checkpoints whose answer is known, for the checkpoint-verdict tests and
the coverage study (bench/study_checkpoint_verdict.py).

Each session makes ``attempts`` tries of ``cost`` tokens on its task; after try n its work
holds the best of ``shape(n)`` independent draws from the task's score distribution and the
runner judges it (one ``checkpoint`` row). ``shape(n) = n`` is an exact repeated sampler: at
any budget it *is* the best of k sessions of one try, so every verdict other than "on" is
false. Scores: ``passfail`` (Bernoulli with a per-task rate, the common agent task),
``levels`` (6 rubric levels) or ``continuous``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from eloledger.ledger.row import LedgerRow

KINDS = ("passfail", "levels", "continuous")
SHAPES: dict[str, Callable[[int], int]] = {
    "sampler": lambda n: n,
    "plateau": lambda n: min(n, 2),  # stops improving after two tries: below sampling
    "beater": lambda n: n * n,  # reuses what it learnt: above sampling
}


def _draws(rng: np.random.Generator, kind: str, size: int, task: tuple[float, float]) -> Any:
    rate, mean = task
    if kind == "passfail":
        return (rng.random(size) < rate).astype(float)
    if kind == "levels":
        return np.clip(np.round(mean + rng.standard_normal(size)), 0, 5) / 5.0
    return mean + rng.standard_normal(size)


def agent_rows(
    seed: int,
    *,
    tasks: int,
    sessions: int,
    kind: str = "passfail",
    shape: str = "sampler",
    attempts: int = 8,
    cost: int = 1000,
) -> list[dict[str, Any]]:
    """Checkpoint and session rows of one agent arm ``shape`` on ``tasks`` tasks."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    rng = np.random.default_rng(seed)
    grow = SHAPES[shape]
    rows: list[LedgerRow] = []
    ts = 1.0e9
    for t in range(tasks):
        task = (float(rng.uniform(0.05, 0.6)), float(rng.uniform(0.5, 4.5)))
        for s in range(sessions):
            draws = _draws(rng, kind, grow(attempts), task)
            base: dict[str, Any] = {"run_id": "sim", "task_id": f"t{t:03d}", "arm": shape,
                                    "agent": "sim", "model": "sim-model", "session": s,
                                    "sample": 0}  # fmt: skip
            for n in range(1, attempts + 1):
                ts += 1.0
                rows.append(LedgerRow(**base, ts=ts, role="checkpoint", checkpoint=n - 1,
                                      budget_tokens=n * cost, budget_turns=n,
                                      **_judged(kind, float(draws[: grow(n)].max()))))  # fmt: skip
            ts += 1.0
            rows.append(LedgerRow(**base, ts=ts, role="sample", status="ok",
                                  prompt_tokens=attempts * cost // 2,
                                  completion_tokens=attempts * cost - attempts * cost // 2,
                                  turns=attempts, **_judged(kind, float(draws.max()))))  # fmt: skip
    return [row.to_dict() for row in rows]  # as a reader hands rows over


def _judged(kind: str, value: float) -> dict[str, Any]:
    if kind == "passfail":
        return {"passed": bool(value >= 1.0)}
    return {"score": value, "direction": "max"}
