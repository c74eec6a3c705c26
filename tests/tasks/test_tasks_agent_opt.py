"""Builtin:agent-opt holds eight scored tasks (two originals, six
seeded variants from scripts/make_agent_opt.py) that the simulator can tell apart and answer."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

from eloledger.judges.scorer import judge_scored
from eloledger.sim.scored import is_simulated, scored_answer
from eloledger.tasks import load_tasks, lookup_task

ROOT = Path(__file__).resolve().parents[2]


def test_the_file_is_what_the_generator_makes() -> None:
    path = ROOT / "scripts/make_agent_opt.py"
    spec = importlib.util.spec_from_file_location("make_agent_opt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.PATH.read_text(encoding="utf-8") == module.build()


def test_eight_distinct_tasks_the_simulator_finds_by_prompt(tmp_path: Path) -> None:
    tasks = load_tasks("builtin:agent-opt")
    assert len(tasks) == 8 and len({t.task_id for t in tasks}) == 8
    assert [t.direction for t in tasks] == ["max", "min"] * 4  # interleaved: limit 6 = 3 + 3
    for task in tasks:
        wrapped = f"You are working in /tmp/x.\n\n{task.prompt}\n\nWhen done, stop."
        assert lookup_task(wrapped) is task or lookup_task(wrapped).task_id == task.task_id
        assert is_simulated(task)
        others = [t for t in tasks if t is not task]
        assert not any(t.prompt in task.prompt for t in others)  # no prompt holds another
    # each variant's scorer judges its own problem: more rounds of work score better
    for task in tasks[2:]:
        work = tmp_path / task.task_id
        work.mkdir()
        for name, text in (task.files or {}).items():
            (work / name).write_text(text)
        target = "answer.txt" if task.direction == "max" else "fit.txt"
        for seed in range(5):  # the sim's two skills, several sessions
            for p in (0.55, 0.7):
                scores = []
                for rounds in (1, 6):
                    text = scored_answer(task, p, rounds, random.Random(seed))
                    (work / target).write_text(text)
                    scores.append(judge_scored(work, task).score)
                first, last = scores
                better = last > first if task.direction == "max" else last < first
                assert better, (task.task_id, seed, p, scores)
