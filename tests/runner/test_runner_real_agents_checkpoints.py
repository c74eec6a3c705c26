"""Real Claude Code and Codex agent arms with checkpoints, offline.

``eloledger run`` (the real runner, in-process) and its embedded simulator run inside one
``unshare -n`` network namespace (this file is the driver: ``python THIS JOB``); the simulated
agent improves its answer to a scored optimisation task (builtin:agent-opt) each turn. Each
session must leave at least three judged checkpoint rows at increasing token budgets, none past
the session's own tokens, the last the session's final folder with the session's own score, and
every snapshot on disk; a checkpoint re-judged by hand gives the row's score.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

import agent_gateway as gw  # noqa: E402

pytestmark = pytest.mark.e2e
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens", "input_tokens",
                "output_tokens", "cached_tokens", "cache_write_tokens")  # fmt: skip


def _drive(job_path: str) -> None:
    from eloledger.runner.run import run_experiment
    from eloledger.runner.spec import load_spec

    job = json.loads(Path(job_path).read_text())
    result = asyncio.run(run_experiment(load_spec(job["spec"])))
    Path(job["result"]).write_text(json.dumps({"stopped": result.stopped}))


def run_offline(tmp_path: Path, spec_text: str) -> list[dict]:
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text)
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"spec": str(spec), "result": str(tmp_path / "result.json")}))
    env = {**os.environ, "ELOLEDGER_CLIENTS_DIR": str(gw.CLIENTS_PREFIX)}
    cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "_"]
    cmd += [sys.executable, __file__, str(job)]
    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    ledger = tmp_path / "ckpt.ledger.jsonl"
    return [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()]


SPEC = """[experiment]
name = "ckpt-e2e"
profile = "sim"
model = "sim-large"
ledger = "ckpt.ledger.jsonl"
concurrency = 2

[sim]
speed = 50

[tasks]
source = "builtin:agent-opt"
limit = 2  # the original knapsack and line fit (the other six are the demo's variants)

{arms}"""


def _arm(agent: str) -> str:
    turns = "max_turns = 20\n" if agent == "claude-code" else ""
    return (f'[[arms]]\nname = "{agent}"\nkind = "agent"\nagent = "{agent}"\n'
            f'checkpoints = "tokens"\ntimeout_s = 300\n{turns}\n')  # fmt: skip


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_real_cli_sessions_leave_judged_checkpoints_on_a_rising_budget(
    tmp_path: Path, agent: str
) -> None:
    if reason := gw.missing_reason(agent):
        pytest.skip(reason)
    from eloledger.judges.scorer import judge_work
    from eloledger.tasks import load_tasks

    tasks = {t.task_id: t for t in load_tasks("builtin:agent-opt")[:2]}
    rows = run_offline(tmp_path, SPEC.format(arms=_arm(agent)))
    sessions = [r for r in rows if r.get("role") == "sample"]
    assert len(sessions) == len(tasks)
    assert all(r["status"] == "ok" and r["usage_source"] == "server" for r in sessions), sessions
    for s in sessions:
        mine = [r for r in rows if r.get("role") == "checkpoint" and r["task_id"] == s["task_id"]]
        assert len(mine) >= 3, [(r["budget_tokens"], r["score"]) for r in mine]
        assert [r["checkpoint"] for r in mine] == list(range(len(mine)))
        budgets = [r["budget_tokens"] for r in mine]
        assert budgets == sorted(set(budgets)), budgets  # strictly increasing
        assert budgets[0] > 0 and budgets[-1] == s["total_tokens"]  # none past the session's
        assert [r["final"] for r in mine] == [False] * (len(mine) - 1) + [True]
        assert mine[-1]["score"] == s["score"] and s["score"] is not None
        assert all(r["direction"] == s["direction"] == tasks[s["task_id"]].direction for r in mine)
        assert all(r["sandbox"] == "bwrap" and r["passed"] is None for r in mine)
        assert all(r["budget_turns"] <= s["turns"] for r in mine)
        assert all(not any(k in r for k in TOKEN_FIELDS) for r in mine)
        assert all(r["session"] == s["session"] and r["sample"] == s["sample"] for r in mine)
        # the sim's agent improves then plateaus: the first snapshot is worse than the last
        better = max if s["direction"] == "max" else min
        first, last = mine[0]["score"], mine[-1]["score"]
        assert better(first, last) == last and first != last, [r["score"] for r in mine]
        for r in mine:
            snap = tmp_path / r["snapshot"]
            assert snap.is_dir(), snap
        again = judge_work(tmp_path / mine[1]["snapshot"], tasks[s["task_id"]])
        assert again is not None and again.score == mine[1]["score"]


if __name__ == "__main__":
    _drive(sys.argv[1])
