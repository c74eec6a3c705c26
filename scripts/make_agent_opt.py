"""Regenerate src/eloledger/data/tasks/agent-opt.jsonl: the scored optimisation tasks.

Why: a task-clustered interval needs enough tasks (clusters) to mean anything, so the
checkpoint demo needs more than the original knapsack and line fit. This keeps those two lines
as they are (other tests and the bench name them) and adds seeded variants built from them as
templates: a new problem (items or points), the same scorer and check script, and a prompt that
names the instance (the simulator finds a task by its prompt, so no prompt may contain another).

    python scripts/make_agent_opt.py            # rewrite the file
    python scripts/make_agent_opt.py --check    # exit 1 if the file differs from what it makes
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "src/eloledger/data/tasks/agent-opt.jsonl"
VARIANTS = (2, 3, 4)  # instance numbers (and seeds) of the variants of each template


def _knapsack(template: dict, n: int) -> dict:
    rng = random.Random(f"knapsack-{n}")
    items = [{"weight": rng.randint(3, 30), "value": rng.randint(8, 60)} for _ in range(30)]
    problem = {"capacity": sum(i["weight"] for i in items) * 2 // 7, "items": items}
    old = json.loads(template["scorer"].split("\n", 1)[0].removeprefix("PROBLEM = "))
    out = dict(template, task_id=f"opt-knapsack-{n}")
    out["prompt"] = template["prompt"].replace("items.json", f"items.json (instance {n})", 1)
    out["scorer"] = template["scorer"].replace(json.dumps(old), json.dumps(problem), 1)
    assert out["scorer"] != template["scorer"], "the knapsack scorer's PROBLEM line moved"
    out["files"] = dict(template["files"], **{"items.json": json.dumps(problem, indent=1) + "\n"})
    return out


def _linefit(template: dict, n: int) -> dict:
    rng = random.Random(f"linefit-{n}")
    # a slope far from 0, like the original's 2.5: the simulated agent starts from the line
    # (0, 0), so its first rounds are clearly worse than its plateau
    slope = rng.choice((-1, 1)) * rng.uniform(1.5, 3.5)
    intercept = rng.uniform(-4.0, 4.0)
    points = [[x / 4, round(slope * x / 4 + intercept + rng.gauss(0.0, 1.0), 3)] for x in range(40)]
    old = template["scorer"].split("\n", 1)[0].removeprefix("POINTS = ")
    out = dict(template, task_id=f"opt-linefit-{n}")
    out["prompt"] = template["prompt"].replace("data.csv", f"data.csv (instance {n})", 1)
    out["scorer"] = template["scorer"].replace(old, json.dumps(points), 1)
    assert out["scorer"] != template["scorer"], "the line fit scorer's POINTS line moved"
    csv = "x,y\n" + "".join(f"{x},{y}\n" for x, y in points)
    out["files"] = dict(template["files"], **{"data.csv": csv})
    return out


def build() -> str:
    """The file's text: the two original tasks, then their variants, a pair at a time."""
    lines = PATH.read_text(encoding="utf-8").splitlines()
    knapsack, linefit = (json.loads(x) for x in lines[:2])
    tasks = [knapsack, linefit]
    for n in VARIANTS:  # interleaved: a spec's [tasks] limit = 2m takes m of each kind
        tasks += [_knapsack(knapsack, n), _linefit(linefit, n)]
    return "".join(json.dumps(t) + "\n" for t in tasks)


def main() -> int:
    text = build()
    if "--check" in sys.argv[1:]:
        return 0 if PATH.read_text(encoding="utf-8") == text else 1
    PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
