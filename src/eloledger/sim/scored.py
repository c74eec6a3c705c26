"""Scored optimisation tasks on the simulator: answers that improve, then plateau.

An agent session (:mod:`eloledger.sim.agent`) reads the files, then writes a better answer each
turn, a planned number of rounds (more for a stronger model), then stops. Round r's answer closes
a fraction 1 - 0.45**r of the gap between a start and the model's own plateau, which a weaker
model puts further from the optimum: the score rises fast over the first turns and flattens. A
chat model's one-shot reply (:func:`chat_answer`, for k-shot chat arms) is one or two rounds'
worth. Everything is drawn from the caller's seeded ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import orjson

from eloledger.tasks.model import Task

# A session reads the files, then writes a better answer each turn (and runs the task's own
# check script in the same command), a planned number of rounds (more for a stronger model),
# then stops. Round r's answer closes a fraction 1 - 0.45**r of the gap between a start and
# the model's own plateau, which a weaker model puts further from the optimum: the score rises
# fast over the first turns and then flattens. Deterministic per (seed, model, task, key).
_GAP = 0.45


def scored_rounds(p: float, rng: random.Random) -> int:
    """How many improving rounds a session of a model with skill ``p`` plans (3 to 8)."""
    return 3 + int(rng.random() * 3 + 3 * p)


def is_simulated(task: Task) -> bool:
    """Whether the simulator knows how to answer this scored task."""
    return _solver(task) is not None


def scored_answer(task: Task, p: float, r: int, rng: random.Random) -> str:
    """The answer file's text after ``r`` rounds of work by a model of skill ``p``."""
    solver = _solver(task)
    assert solver is not None
    return solver(task, p, r, rng)


def chat_answer(task: Task, p: float, rng: random.Random) -> str | None:
    """A chat model's one-shot reply to a scored agent task: about one round of an agent's
    work (one to two, at random), the answer on its last line; None for other tasks."""
    if _solver(task) is None:
        return None
    r = 1 + int(rng.random() * 2)
    text = scored_answer(task, p, r, random.Random(rng.random()))
    return f"Here is my answer after a quick look at the data:\n{text.strip()}"


def _solver(task: Task) -> Callable[[Task, float, int, random.Random], str] | None:
    tags = set(task.tags)
    if "sim:knapsack" in tags:
        return _knapsack_answer
    if "sim:linefit" in tags:
        return _linefit_answer
    return None


def _knapsack_answer(task: Task, p: float, r: int, rng: random.Random) -> str:
    """Greedy by value per weight over the items it has looked at so far (a share growing with
    r toward all of them), with its density estimates noisier for a weaker model."""
    problem = orjson.loads((task.files or {})["items.json"])
    items = problem["items"]
    order = list(range(len(items)))
    rng.shuffle(order)
    seen = order[: max(1, round(len(items) * (1.0 - _GAP**r)))]
    noise = [1.0 + rng.gauss(0.0, 0.6 * (1.0 - p)) for _ in items]
    seen.sort(key=lambda i: -items[i]["value"] * noise[i] / items[i]["weight"])
    chosen, weight = [], 0
    for i in seen:
        if weight + items[i]["weight"] <= problem["capacity"]:
            chosen.append(i)
            weight += items[i]["weight"]
    return " ".join(map(str, sorted(chosen))) + "\n"


def _linefit_answer(task: Task, p: float, r: int, rng: random.Random) -> str:
    """Least squares approached geometrically from (0, 0), toward an optimum off by an error
    that shrinks with skill (its plateau)."""
    rows = [line.split(",") for line in (task.files or {})["data.csv"].split()[1:]]
    xs, ys = [float(x) for x, _ in rows], [float(y) for _, y in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    b = my - a * mx
    a += rng.gauss(0.0, 0.4 * (1.0 - p))
    b += rng.gauss(0.0, 1.5 * (1.0 - p))
    left = _GAP**r
    return f"{a * (1 - left):.4f} {b * (1 - left):.4f}\n"
