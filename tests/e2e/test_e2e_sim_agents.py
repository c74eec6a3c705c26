"""End to end: the real Claude Code, Codex and Gemini CLIs finish builtin:agent-code tasks
against the embedded simulator, offline (``unshare -n``), with no real key.

Each session runs the canonical headless invocation (tests/agent_gateway.py) in a fresh
working directory holding the task's files; the task's own tests then judge the edited files.
The session key goes in through each CLI's own custom-header setting (``x-sim-sample``), so
the simulator's plan for the session is known and the verdict must match it.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_gateway import canonical_invocation, missing_reason, run_agent  # noqa: E402
from eloledger.agents.usage import CallUsage  # noqa: E402
from eloledger.sim.agent import Step, plan_session  # noqa: E402
from eloledger.tasks import Task, load_tasks  # noqa: E402

pytestmark = pytest.mark.e2e

TASKS = {t.task_id: t for t in load_tasks("builtin:agent-code")}
SIM = {"speed": 50, "seed": 0}


def _plan(task: Task, model: str, sample: str) -> tuple[Step, ...]:
    key = f"agent|{SIM['seed']}|{model}|{task.task_id}|s{sample}"
    return plan_session(task, model, random.Random(key))


def _solved_within(steps: tuple[Step, ...], max_turns: int) -> bool:
    writes = [s for s in steps[:max_turns] if s.kind in ("write", "write_test")]
    return bool(writes) and writes[-1].right


def _samples(task: Task, model: str, want, count: int) -> list[str]:
    """Session keys whose plans satisfy ``want`` (plans are pure: found without running)."""
    found = [str(i) for i in range(500) if want(_plan(task, model, str(i)))]
    assert len(found) >= count
    return found[:count]


def _judge(task: Task, cwd: Path) -> bool:
    (cwd / "_judge.py").write_text(task.tests or "", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-E", "-s", "_judge.py"], cwd=cwd, capture_output=True, timeout=60
    )
    return done.returncode == 0


def _session(agent: str, task: Task, model: str, sample: str, tmp: Path, max_turns: int = 8):
    if reason := missing_reason(agent):
        pytest.skip(reason)
    work = tmp / f"work-{sample}-{max_turns}"
    work.mkdir()
    for rel, text in (task.files or {}).items():
        (work / rel).write_text(text, encoding="utf-8")
    extra = f',http_headers={{"x-sim-sample"="{sample}"}}' if agent == "codex" else ""
    argv, env = canonical_invocation(
        agent,
        task.prompt,
        home=tmp / f"home-{sample}-{max_turns}",
        workdir=work,
        key="sk-sim-e2e",
        model=model,
        max_turns=max_turns,
        extra_provider=extra,
    )
    env["ANTHROPIC_CUSTOM_HEADERS"] = f"x-sim-sample: {sample}"
    env["GEMINI_CLI_CUSTOM_HEADERS"] = f"x-sim-sample: {sample}"
    run = run_agent(argv, env=env, cwd=work, timeout=240, sim=SIM)
    assert not run.timed_out, run.stderr[-2000:]
    return run, work


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli"])
def test_real_cli_finishes_tasks_and_the_tests_judge_what_the_plan_says(
    agent: str, tmp_path: Path
) -> None:
    task = TASKS["agent-roman"]
    model = "sim-small"
    good = _samples(task, model, lambda p: _solved_within(p, 99) and len(p) >= 4, 1)[0]
    bad = _samples(task, model, lambda p: not _solved_within(p, 99), 1)[0]
    for sample, expected in ((good, True), (bad, False)):
        run, work = _session(agent, task, model, sample, tmp_path)
        assert run.returncode == 0, run.stderr[-2000:]
        assert _judge(task, work) is expected
        steps = _plan(task, model, sample)
        posts = [s for s in run.seen if s.method == "POST" and s.status == 200]
        assert len(posts) >= len(steps)  # one model request per planned turn (+ side calls)
        print(f"{agent} sample {sample}: {len(steps)} turns, solved={expected}, {run.wall_s:.1f}s")


def test_claude_code_max_turns_2_vs_8_gives_different_success(tmp_path: Path) -> None:
    task = TASKS["agent-roman"]
    model = "sim-small"
    late = _samples(task, model, lambda p: _solved_within(p, 8) and not _solved_within(p, 2), 2)
    early = _samples(task, model, lambda p: _solved_within(p, 2), 1)
    solved = {2: 0, 8: 0}
    for turns in (2, 8):
        for sample in late + early:
            run, work = _session("claude-code", task, model, sample, tmp_path, max_turns=turns)
            solved[turns] += _judge(task, work)
            result = next(e for e in run.events() if e.get("type") == "result")
            if turns == 2 and sample in late:
                assert result["subtype"] == "error_max_turns" and run.returncode == 1
    print(f"claude-code solved {solved[2]}/3 at --max-turns 2, {solved[8]}/3 at 8")
    assert (solved[2], solved[8]) == (1, 3)


def test_claude_code_reports_exactly_the_tokens_the_simulator_served(tmp_path: Path) -> None:
    task = TASKS["agent-mean"]
    run, _ = _session("claude-code", task, "sim-large", "11", tmp_path)
    result = next(e for e in run.events() if e.get("type") == "result")
    total = CallUsage()
    for usage in result["modelUsage"].values():
        total = total + CallUsage.from_claude(usage)
    assert run.sim_tokens == {
        "prompt_tokens": total.prompt_tokens,
        "completion_tokens": total.completion_tokens,
    }
    assert total.cached_tokens > 0 and total.cache_write_tokens > 0


def test_codex_reports_the_simulators_tokens_and_survives_its_websocket_attempt(
    tmp_path: Path,
) -> None:
    if reason := missing_reason("codex"):
        pytest.skip(reason)
    task = TASKS["agent-fizzbuzz"]
    work = tmp_path / "work"
    work.mkdir()
    for rel, text in (task.files or {}).items():
        (work / rel).write_text(text, encoding="utf-8")
    argv, env = canonical_invocation(
        "codex",
        task.prompt,
        home=tmp_path / "home",
        workdir=work,
        model="sim-large",
        extra_provider=',supports_websockets=true,http_headers={"x-sim-sample"="4"}',
    )
    run = run_agent(argv, env=env, cwd=work, timeout=240, sim=SIM)
    assert run.returncode == 0, run.stderr[-2000:]
    upgrades = [s for s in run.seen if s.method == "GET" and s.path == "/v1/responses"]
    assert [s.status for s in upgrades] == [426]  # one attempt, then HTTPS at once
    done = [e for e in run.events() if e.get("type") == "turn.completed"][-1]
    usage = CallUsage.from_codex(done["usage"])
    assert run.sim_tokens == {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    }
    assert usage.reasoning_tokens > 0 and usage.cached_tokens > 0
    assert _judge(task, work) == _solved_within(_plan(task, "sim-large", "4"), 99)
    print(f"codex via websocket 426 fallback: {len(upgrades)} upgrades, {run.wall_s:.1f}s")
