"""A mixed task file is judged per task with [judge] kind = "auto" (the
default): rule for answers, the LLM judge only for the prompt-only task, and a verifier arm
falls back to the judge's pick on that task alone. Real ``eloledger run``, strict gateway."""

from __future__ import annotations

import json
from pathlib import Path

from runner_cli import add_profile, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

TASKS = [
    *({"task_id": f"a{i}", "prompt": f"What is {i} + 4?", "answer": str(i + 4)} for i in range(3)),
    {"task_id": "open", "prompt": "Write a haiku about the sea."},
]
ARMS = '[[arms]]\nname = "base"\n\n[[arms]]\nname = "bo2"\nkind = "best_of_n"\nn = 2\n'


def _reply(prompt: str) -> str:
    if "Which answer is better?" in prompt:
        return "A"
    for i in range(3):
        if f"What is {i} + 4?" in prompt:
            return f"The answer is {i + 4}."
    return "Waves fold on the sand"


def test_mixed_task_file_is_judged_per_task(tmp_path: Path) -> None:
    with serve(GatewayConfig(reply=_reply)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", TASKS), arms=ARMS)
        done = run(spec, tmp_path / "l.jsonl", "--format", "json", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    ledger = rows(tmp_path / "l.jsonl")
    judges = [r for r in ledger if r["role"] == "judge"]
    # only the open task reaches the judge: bo2's knockout (1 match x 2 orders), base vs bo2 (x 2)
    assert {r["task_id"] for r in judges} == {"open"} and len(judges) == 4
    samples = [r for r in ledger if r["role"] == "sample"]
    assert all(r["passed"] for r in samples if r["task_id"] != "open")
    assert all("score" not in r for r in samples if r["task_id"] == "open")
    payload = json.loads(done.stdout)
    assert payload["run"]["judged_by"] == {"rule": 3, "the LLM judge": 1}
    assert "judged per task (kind = auto): 3 by rule, 1 by the LLM judge" in done.stderr
    comparisons = (tmp_path / "l.comparisons.csv").read_text().splitlines()
    assert len(comparisons) == 1 + 4  # every task compared once (base vs bo2)
