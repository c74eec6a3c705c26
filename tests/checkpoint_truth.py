"""Planted-truth ledgers : agent sessions with checkpoints whose Elo is known.

Every session of every arm draws independent scores U(0, 1) per attempt (one attempt costs
``COST`` tokens); after n attempts an arm's work holds the best of ``m(n)`` draws. Within a task,
the best of m1 draws beats the best of m2 independent draws with probability m1 / (m1 + m2):
exactly Bradley-Terry with theta = ln m, so the true Elo of arm@b is 1000 + 400·log10 m(n(b))
and the best of k sessions of one attempt is 400·log10 k above one session.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

COST = 1000
ATTEMPTS = 12

SHAPES: dict[str, Callable[[int], int]] = {
    "sampler": lambda n: n,  # improves exactly like sampling again: on the line
    "plateau": lambda n: min(n, 3),  # stops improving after three attempts: below
    "beater": lambda n: n * n,  # reuses what it learnt: above
}


def true_elo(shape: str, budget: float) -> float:
    """The planted Elo of arm@budget (the anchor, one draw, is 1000)."""
    n = max(int(math.floor(budget / COST + 1e-9)), 1)
    return 1000.0 + 400.0 * math.log10(SHAPES[shape](n))


def planted_rows(
    seed: int,
    *,
    tasks: int = 20,
    sessions: int = 12,
    shapes: tuple[str, ...] = tuple(SHAPES),
    direction: str = "max",
    chat_arm: bool = False,
    jitter: float = 0.0,
) -> list[dict[str, Any]]:
    """Checkpoint and session rows of the planted agents (and optionally a k-shot chat arm,
    one draw per call, ATTEMPTS calls per session). ``direction = "min"`` writes 1 - score.
    ``jitter = 0.2``: each session's (each chat call's) tokens per attempt are COST times
    U(0.8, 1.2), so sessions snapshot at budgets that are not multiples of one another."""
    rng = np.random.default_rng(seed)
    spread = np.random.default_rng([seed, 22])  # its own stream: jitter=0 keeps the scores

    def cost() -> int:
        return round(COST * (1.0 + spread.uniform(-jitter, jitter))) if jitter else COST

    rows: list[dict[str, Any]] = []
    ts = 1.0e9

    def raw(x: float) -> float:
        return 1.0 - x if direction == "min" else x

    for t in range(tasks):
        task = f"task{t:02d}"
        for shape in shapes:
            for s in range(sessions):
                draws = rng.random(SHAPES[shape](ATTEMPTS))
                each = cost()
                base = {"v": 1, "run_id": "planted", "task_id": task, "arm": shape,
                        "agent": "sim", "model": "sim-model", "session": s, "sample": 0,
                        "sandbox": "bwrap", "direction": direction}  # fmt: skip
                for n in range(1, ATTEMPTS + 1):
                    ts += 1.0
                    rows.append({**base, "ts": ts, "role": "checkpoint", "checkpoint": n - 1,
                                 "budget_tokens": n * each, "budget_turns": n,
                                 "budget_seconds": 2.0 * n,
                                 "score": raw(float(draws[: SHAPES[shape](n)].max())),
                                 "passed": None, "snapshot": f"snap/{task}/{shape}/{s}/{n}",
                                 **({"final": True} if n == ATTEMPTS else {})})  # fmt: skip
                ts += 1.0
                rows.append({**base, "ts": ts, "role": "sample", "status": "ok",
                             "prompt_tokens": ATTEMPTS * each * 3 // 4,
                             "completion_tokens": ATTEMPTS * each - ATTEMPTS * each * 3 // 4,
                             "total_tokens": ATTEMPTS * each, "turns": ATTEMPTS,
                             "latency_ms": 2000.0 * ATTEMPTS,
                             "score": raw(float(draws.max())), "passed": None})  # fmt: skip
        if chat_arm:
            for s in range(sessions):
                for n in range(ATTEMPTS):
                    ts += 1.0
                    each = cost()
                    rows.append({"v": 1, "run_id": "planted", "ts": ts, "task_id": task,
                                 "arm": "kshot", "model": "sim-model", "session": s,
                                 "sample": n, "role": "sample", "status": "ok",
                                 "prompt_tokens": each * 3 // 4,
                                 "completion_tokens": each - each * 3 // 4,
                                 "total_tokens": each, "latency_ms": 2000.0,
                                 "score": raw(float(rng.random())), "passed": None,
                                 "direction": direction})  # fmt: skip
    return rows


def write_ledger(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
