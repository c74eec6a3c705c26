"""The simulated coding agent: what it does next in a session on a built-in agent task.

A session's plan is drawn once from (server seed, model, task, session key), so a rerun with
the same keys repeats it. The model's skill (``model.p_correct`` of the task's difficulty)
sets how often a fix is right and how carefully the agent works:

* careless: writes the fix at once (sometimes running the tests in the same command) and
  stops;
* careful: runs the tests first, edits on the next turn, runs them again;
* exploring: reads the files, then as careful.

After a failing test run it tries again (more often right: it has seen the error) or gives
up. So a session takes 2 to ~8 model turns, and a turn limit of 2 cuts most careful sessions
before their edit: ``max_turns`` 2 vs 8 gives visibly different success rates.

Every action is a shell command (the one tool all three CLIs offer): files are written with a
quoted here-doc. The final message reads the last test output the CLI sent back.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from eloledger.sim.agentwire import Turn, Usage, json_answer, shell_arguments
from eloledger.sim.model import count_prompt_tokens, p_correct
from eloledger.sim.scored import is_simulated, scored_answer, scored_rounds
from eloledger.tasks import lookup_task
from eloledger.tasks.model import Task

PASSED = "ALL TESTS PASSED"
HEREDOC_END = "ELOLEDGER_SIM_EOF"
AGENT_TEMPERATURE = 1.0  # CLIs rarely send one; the skill formula takes the default


@dataclass(frozen=True)
class Action:
    """One model turn: a shell command to run (then another turn), or the final message."""

    text: str
    command: str | None = None


@dataclass(frozen=True)
class Step:
    kind: str  # look | test | write | write_test | finish
    right: bool = False  # for writes: the solution, or a plausible wrong edit


def plan_session(task: Task, model: str, rng: random.Random) -> tuple[Step, ...]:
    """The whole course of one session, drawn up front (see the module docstring)."""
    p = p_correct(task.difficulty, AGENT_TEMPERATURE, model)
    roll = rng.random()
    style = "careless" if roll < 0.25 + 0.35 * p else ("careful" if roll < 0.85 else "explore")
    steps: list[Step] = []
    if style == "explore":
        steps.append(Step("look"))
    if style != "careless":
        steps.append(Step("test"))
    right = rng.random() < p
    verify = style != "careless" or rng.random() < 0.5
    if style == "careless" and verify:
        steps.append(Step("write_test", right))
    else:
        steps.append(Step("write", right))
        if verify:
            steps.append(Step("test"))
    tries = 1
    while verify and not right and tries < 3 and rng.random() > 0.35 * (1.0 - p):
        right = rng.random() < p + 0.5 * (1.0 - p)  # it has seen the failing output
        steps += [Step("write", right), Step("test")]
        tries += 1
    steps.append(Step("finish"))
    return tuple(steps)


def act(task: Task, steps: tuple[Step, ...], turn: int, outputs: list[str]) -> Action:
    """The action for ``turn`` (0-based: the number of tool results so far)."""
    step = steps[min(turn, len(steps) - 1)]
    tests = run_tests_command(task)
    if step.kind == "look":
        return Action("Let me read the code and the tests first.", "cat " + " ".join(_quoted(task)))
    if step.kind == "test":
        return Action("Let me run the tests.", tests)
    if step.kind in ("write", "write_test"):
        command = write_command(task, step.right)
        if step.kind == "write_test":
            return Action(
                "I found the bug; fixing it and running the tests.", command + "\n" + tests
            )
        return Action("I found the bug; here is the fix.", command)
    return Action(final_message(task, outputs))


def final_message(task: Task, outputs: list[str]) -> str:
    """What the agent says at the end, from the last test output it saw (if any)."""
    runs = [o for o in outputs if PASSED in o or "Traceback" in o or "Error" in o]
    if not runs:
        return f"I fixed the bug in {', '.join(_targets(task))}."
    if PASSED in runs[-1]:
        return f"Fixed {', '.join(_targets(task))}: the tests pass now."
    return "The tests still fail and I could not find a fix; giving up."


def run_tests_command(task: Task) -> str:
    """Run the task's test scripts; the pass line is printed only if all of them pass."""
    scripts = [p for p in sorted(task.files or {}) if p.rsplit("/", 1)[-1].startswith("test")]
    runs = " && ".join(f"python3 {_quote(p)}" for p in scripts) or "true"
    return f"{runs} && echo '{PASSED}'"


def write_command(task: Task, right: bool) -> str:
    """A here-doc per file: the solution, or the original with a cosmetic (wrong) edit."""
    parts = []
    for path in _targets(task):
        text = (task.solution_files or {})[path] if right else _wrong_edit(task, path)
        if not text.endswith("\n"):
            text += "\n"
        parts.append(f"cat > {_quote(path)} <<'{HEREDOC_END}'\n{text}{HEREDOC_END}")
    return "\n".join(parts)


def _wrong_edit(task: Task, path: str) -> str:
    original = (task.files or {}).get(path, "")
    return "# Reviewed: the logic below looks right.\n" + original


def _targets(task: Task) -> list[str]:
    return sorted(task.solution_files or {})


def _quoted(task: Task) -> list[str]:
    return [_quote(p) for p in sorted(task.files or {})]


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


# --- one request of a session ------------------------------------------------------------------
_SESSION_RE = re.compile(r"\[sim session ([\w.:|-]+)\]")
GENERIC_ANSWER = (
    "This is the eloledger simulator's agent: it only works on the built-in agent tasks "
    "(builtin:agent-code), and this request is not one of them."
)


@dataclass(frozen=True)
class AgentReply:
    text: str
    call: dict | None  # arguments for the offered shell tool
    usage: Usage


def respond(turn: Turn, *, seed: int, new_key: Callable[[str, str], str]) -> AgentReply:
    """The agent's next move in the session this request belongs to, with its usage.

    The session key is taken from the agent's own first message (it writes ``[sim session
    KEY]`` there), else a new one comes from ``new_key(model, task_id)``: the server's sample
    header or its per-(model, task) session counter.
    """
    task = lookup_task(turn.user_text)
    if turn.wants_json:
        return _reply(turn, json_answer(turn.json_schema), None, random.Random(seed), None)
    if task is not None and is_simulated(task) and turn.shell is not None:
        return _respond_scored(turn, task, seed, new_key)
    if task is None or task.kind != "agent" or not task.solution_files or turn.shell is None:
        rng = random.Random(f"agent|{seed}|{turn.model}|{len(turn.outputs)}")
        return _reply(turn, GENERIC_ANSWER, None, rng, task)
    found = _SESSION_RE.search(turn.assistant_text)
    key = found.group(1) if found else new_key(turn.model, task.task_id)
    rng = random.Random(f"agent|{seed}|{turn.model}|{task.task_id}|{key}")
    steps = plan_session(task, turn.model, rng)
    action = act(task, steps, len(turn.outputs), turn.outputs)
    text = action.text if found else f"{action.text} [sim session {key}]"
    call = shell_arguments(turn.shell, action.command) if action.command else None
    usage_rng = random.Random(f"usage|{seed}|{turn.model}|{task.task_id}|{key}|{len(turn.outputs)}")
    return _reply(turn, text, call, usage_rng, task)


def _reply(
    turn: Turn, text: str, call: dict | None, rng: random.Random, task: Task | None
) -> AgentReply:
    return AgentReply(text, call, estimate_usage(turn, text, call, rng, task))


def estimate_usage(
    turn: Turn, text: str, call: dict | None, rng: random.Random, task: Task | None
) -> Usage:
    """Realistic counts: the prompt grows with the conversation and later turns read the cache.

    Anthropic caches what the client marks (Claude Code marks the conversation, so each turn
    writes its new part and reads the rest); OpenAI and Gemini cache implicitly, in 128-token
    blocks once the shared prefix reaches 1024 tokens. Responses and Gemini also think.
    """
    prompt = max(1, (turn.prompt_chars + 3) // 4)  # as model.count_prompt_tokens
    prefix = min(prompt, turn.prefix_chars // 4)
    output = count_prompt_tokens(text + (orjson.dumps(call).decode() if call else ""))
    difficulty = task.difficulty if task is not None else 0.3
    if turn.wire == "anthropic":
        if not turn.cache_marked:
            return Usage(prompt, 0, 0, output, 0)
        fresh = min(prompt, rng.randint(3, 9))
        return Usage(fresh, prefix, max(0, prompt - prefix - fresh), output, 0)
    cached = prefix // 128 * 128 if prefix >= 1024 else 0
    reasoning = rng.randint(8, 24 + int(220 * difficulty))
    return Usage(prompt - cached, cached, 0, output, reasoning)


# --- scored optimisation tasks: see sim.scored for the answers ---------------------


def _respond_scored(
    turn: Turn, task: Task, seed: int, new_key: Callable[[str, str], str]
) -> AgentReply:
    found = _SESSION_RE.search(turn.assistant_text)
    key = found.group(1) if found else new_key(turn.model, task.task_id)
    base = f"agent|{seed}|{turn.model}|{task.task_id}|{key}"
    p = p_correct(task.difficulty, AGENT_TEMPERATURE, turn.model)
    rounds = scored_rounds(p, random.Random(base))
    step = len(turn.outputs)
    if step == 0:
        action = Action("Let me read the problem first.", "cat " + " ".join(_quoted(task)))
    elif step <= rounds:
        text = scored_answer(task, p, step, random.Random(base + "|solve"))
        (target,) = (n for n in ("answer.txt", "fit.txt") if n in (task.files or {}))
        command = f"cat > {_quote(target)} <<'{HEREDOC_END}'\n{text}{HEREDOC_END}\npython3 check.py"
        action = Action(f"Round {step}: a better answer, then its score.", command)
    else:
        last = next((o for o in reversed(turn.outputs) if "score:" in o), "")
        action = Action(f"Done after {rounds} rounds. Last check: {last.strip()[:120]}")
    text = action.text if found else f"{action.text} [sim session {key}]"
    call = shell_arguments(turn.shell, action.command) if action.command else None
    usage_rng = random.Random(f"usage|{base}|{step}")
    return _reply(turn, text, call, usage_rng, task)
