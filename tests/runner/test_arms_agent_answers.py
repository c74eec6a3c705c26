"""An agent arm on answer tasks (no files, no tests) is judged like a chat
answer, its final message scored by the rule judge, through the real runner and a stand-in
``claude`` executable (tests/agents/test_agent_run.py's)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from test_agent_run import clients  # noqa: F401 - the stand-in CLI fixture

from eloledger.runner.run import run_experiment
from eloledger.runner.spec import load_spec

TASKS = [
    {"task_id": "says-done", "prompt": "Reply with the word done.", "answer": "done"},
    {"task_id": "wants-other", "prompt": "Reply with the word other.", "answer": "other"},
]
SPEC = """[experiment]
name = "agent-answers"
profile = "sim"
ledger = "a.ledger.jsonl"
concurrency = 2

[tasks]
source = "tasks.jsonl"

[judge]
sandbox = "none"

[[arms]]
name = "one"
kind = "agent"
agent = "claude-code"
model = "lazy"

[[arms]]
name = "two"
kind = "agent"
agent = "claude-code"
model = "lazy"
max_turns = 3
"""


def test_agent_final_messages_on_answer_tasks_are_judged(
    tmp_path: Path,
    clients: Path,  # noqa: F811
) -> None:
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    (tmp_path / "spec.toml").write_text(SPEC)
    spec = load_spec(tmp_path / "spec.toml")
    result = asyncio.run(run_experiment(spec))
    rows = [json.loads(x) for x in spec.ledger.read_text().splitlines() if x.strip()]
    rows = [r for r in rows if r["role"] != "call"]  # the sessions (not their metered calls)
    assert len(rows) == 4 and all(r["content"] == "done" for r in rows)
    # the stand-in always answers "done": right on one task, wrong on the other
    assert {(r["task_id"], r["passed"]) for r in rows} == {
        ("says-done", True), ("wants-other", False),
    }  # fmt: skip
    assert all(r["score"] in (0.0, 1.0) for r in rows)
    assert not any("no sample could be scored" in w for w in result.warnings)
    assert result.comparisons == 2  # both tasks compared (ties): the arms are in the Elo table
