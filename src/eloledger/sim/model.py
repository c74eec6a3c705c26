"""The simulated model: seeded, difficulty-aware answers with realistic lengths and timing.

Accuracy. For a built-in task of difficulty ``d`` (0..1), model skill ``s`` and temperature
``T`` the reply is right with probability

    p(d, T) = 1 / (1 + exp(-9 * (s - 0.06 * max(0, T - 0.7) - d)))

with ``s = 0.55`` for ``sim-small``, ``0.70`` for ``sim-large`` (0.6 for any other name).
So easy tasks (d ≈ 0.05) are right ~98 % of the time, d = 0.55 about half the time for
sim-small, and the few tasks with d > 0.9 stay below ~5 %: best-of-n shows diminishing
returns. Higher temperature costs a little accuracy and makes samples more diverse: at
``T == 0`` the sample key is ignored (every sample is the same), and wrong answers fall on
the task's two "attractor" mistakes with share ``0.6 - 0.25 * min(T, 1.2)``, otherwise they
are scattered over many values, so majority voting helps on mid-difficulty tasks and
converges on the attractor on the hardest ones (as real models do).

Determinism. Every draw comes from ``random.Random`` seeded with (server seed, model,
temperature, sample key, prompt); the server supplies the sample key (request ``seed``,
header ``x-sim-sample`` or a per-prompt request counter).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass

from eloledger.sim import gullible_judge
from eloledger.sim.scored import chat_answer
from eloledger.tasks import Task, builtin_task, lookup_task

MODEL_SKILL = {"sim-small": 0.55, "sim-large": 0.70}
DEFAULT_SKILL = 0.60
# Seconds before the first token and between tokens at speed 1 (per model).
MODEL_TIMING = {"sim-small": (0.30, 0.012), "sim-large": (0.45, 0.022)}
DEFAULT_TIMING = (0.35, 0.015)

_TOKEN_RE = re.compile(r" ?[A-Za-z]+| ?\d{1,3}| ?[^\sA-Za-z\d]|\s+")
_ANSWER_RE = re.compile(r"Answer:\s*\**\s*(-?[\d,]*\.?\d+)", re.IGNORECASE)
_CODE_RE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)
_JUDGE_RE = re.compile(r"<<<A>>>(.*?)<<<END A>>>.*?<<<B>>>(.*?)<<<END B>>>", re.DOTALL)
_FENCED_RE = re.compile(  # judges.llm's per-match fences
    r"<<<ANSWER A (\S+)>>>(.*?)<<<END ANSWER A \1>>>.*?<<<ANSWER B \1>>>(.*?)<<<END ANSWER B \1>>>",
    re.DOTALL,
)
_TASK_ID_RE = re.compile(r"^\s*TASK_ID:\s*(\S+)\s*$", re.MULTILINE)

_STEPS = (
    "First, note the quantities given in the problem: {a} and {b}.",
    "We need to combine them in the right order.",
    "Taking {a} as the starting point keeps the units consistent.",
    "Next, apply the operation the question asks for to {b}.",
    "That gives an intermediate value of {c}.",
    "Let me double-check this step, since it is easy to slip here.",
    "The question asks for a single number, so no units are needed in the answer.",
    "Going back over the arithmetic, {a} and {c} are consistent with each other.",
    "An alternative approach gives the same structure, which is reassuring.",
    "Careful: the wording means we must not count the same item twice.",
    "So far the partial result is {c}, and one more step remains.",
    "Writing it out explicitly avoids an off-by-one mistake.",
)
_CODE_NOTES = (
    "The function handles the empty input as a special case.",
    "It runs in linear time for typical inputs.",
    "Edge cases such as negative numbers are covered by the same logic.",
    "No external libraries are needed.",
    "The loop keeps the invariant described in the task.",
)
_GENERIC = (
    "This reply comes from the eloledger simulator, not from a real language model.",
    "It answers built-in tasks with a difficulty-dependent accuracy.",
    "For other prompts it produces filler text of a realistic length.",
    "Token counts and timings are simulated but follow the real wire formats.",
)


@dataclass
class Reply:
    """A simulated completion: its text split into tokens, plus usage and timing."""

    pieces: list[str]
    prompt_tokens: int
    ttft: float  # seconds at speed 1
    per_token: float  # seconds at speed 1

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def tokenize(text: str) -> list[str]:
    """Split text into word-ish pieces that join back to exactly ``text``."""
    return _TOKEN_RE.findall(text)


def count_prompt_tokens(text: str) -> int:
    """About four characters per token, as for English with common tokenizers."""
    return max(1, (len(text) + 3) // 4)


def p_correct(difficulty: float, temperature: float, model: str) -> float:
    """Probability of a right answer (see the module docstring for the formula)."""
    skill = MODEL_SKILL.get(model, DEFAULT_SKILL) - 0.06 * max(0.0, temperature - 0.7)
    return 1.0 / (1.0 + math.exp(-9.0 * (skill - difficulty)))


def make_rng(
    seed: int, model: str, temperature: float, sample_key: str, prompt: str
) -> random.Random:
    """A generator reproducible across processes (str seeds hash with SHA-512)."""
    digest = hashlib.blake2b(prompt.encode(), digest_size=12).hexdigest()
    key = sample_key if temperature > 0 else "t0"
    return random.Random(f"{seed}|{model}|{temperature:.3f}|{key}|{digest}")


def generate(prompt: str, *, model: str, temperature: float, rng: random.Random) -> Reply:
    """The reply text for ``prompt`` (a task, a judge request or anything else)."""
    prompt_tokens = count_prompt_tokens(prompt)
    ttft0, tok0 = MODEL_TIMING.get(model, DEFAULT_TIMING)
    ttft = (ttft0 + 0.0004 * prompt_tokens) * rng.lognormvariate(0.0, 0.25)
    per_token = tok0 * rng.lognormvariate(0.0, 0.15)
    judged = _JUDGE_RE.search(prompt)
    fenced = _FENCED_RE.search(prompt)
    if model == gullible_judge.MODEL:
        text = gullible_judge.reply(prompt, _is_right)
    elif fenced is not None:
        text = "VERDICT: " + _judge(prompt, fenced.group(2), fenced.group(3), rng)
    elif judged is not None:
        text = _judge(prompt, judged.group(1), judged.group(2), rng)
    else:
        task = lookup_task(prompt)
        scored = chat_answer(task, p_correct(task.difficulty, temperature, model), rng) if (
            task is not None and task.kind == "agent") else None  # fmt: skip
        if scored is not None:
            text = scored
        elif task is None or task.kind == "agent":  # agent tasks: see sim.agent
            text = _generic(rng)
        elif task.kind == "code" and task.solution:
            text = _code_reply(task, temperature, model, rng)
        else:
            text = _numeric_reply(task, temperature, model, rng)
    return Reply(tokenize(text), prompt_tokens, ttft, per_token)


def _target_length(difficulty: float, rng: random.Random) -> int:
    return max(20, min(700, int((30 + 260 * difficulty) * rng.lognormvariate(0.0, 0.3))))


def _numeric_reply(task: Task, temperature: float, model: str, rng: random.Random) -> str:
    answer = task.answer or "0"
    if rng.random() >= p_correct(task.difficulty, temperature, model):
        answer = _wrong_answer(task, temperature, rng)
    numbers = re.findall(r"\d+", task.prompt) or ["1", "2"]
    a = numbers[0]
    b = numbers[-1]
    c = str(rng.randint(2, 400))
    target = _target_length(task.difficulty, rng)
    steps: list[str] = []
    count = 9
    while count < target:
        sentence = rng.choice(_STEPS).format(a=a, b=b, c=c)
        steps.append(sentence)
        count += len(tokenize(sentence)) + 1
    body = " ".join(steps)
    return (
        f"Let me work through this step by step.\n\n{body}\n\n"
        f"So the result is {answer}.\n\nAnswer: {answer}"
    )


def _wrong_answer(task: Task, temperature: float, rng: random.Random) -> str:
    """A wrong value: often one of two task-specific attractors, else scattered."""
    right = task.answer or "0"
    try:
        value = float(right.replace(",", ""))
    except ValueError:
        return right + " (approximately)"
    attractors = _attractors(task.task_id, value)
    if rng.random() < 0.6 - 0.25 * min(temperature, 1.2):
        return _fmt(attractors[0] if rng.random() < 0.65 else attractors[1])
    spread = max(6.0, abs(value) * 0.8)
    for _ in range(20):
        guess = value + rng.uniform(-spread, spread)
        guess = round(guess) if value.is_integer() else round(guess, 2)
        if guess != value and guess not in attractors:
            return _fmt(guess)
    return _fmt(value + 7)


def _attractors(task_id: str, value: float) -> tuple[float, float]:
    """Two plausible mistakes (off by one, doubled, halved, ...) fixed per task."""
    rng = random.Random(f"attractor|{task_id}")
    options = [value + 1, value - 1, value * 2, value + 10, value - 10]
    if value.is_integer() and value % 2 == 0 and value != 0:
        options.append(value / 2)
    options = [o for o in options if o != value]
    first, second = rng.sample(options, 2)
    return first, second


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _code_reply(task: Task, temperature: float, model: str, rng: random.Random) -> str:
    correct = rng.random() < p_correct(task.difficulty, temperature, model)
    if correct or not task.buggy:
        code = task.solution or ""
    else:
        weights = [2.0] + [1.0] * (len(task.buggy) - 1)
        code = rng.choices(task.buggy, weights=weights)[0]
    notes = " ".join(rng.sample(_CODE_NOTES, k=rng.randint(1, 3)))
    name = task.entry_point or "the function"
    return f"Here is an implementation of `{name}`:\n\n```python\n{code}```\n\n{notes}"


def _generic(rng: random.Random) -> str:
    target = rng.randint(30, 150)
    parts: list[str] = []
    count = 0
    while count < target:
        sentence = rng.choice(_GENERIC)
        parts.append(sentence)
        count += len(tokenize(sentence)) + 1
    return " ".join(parts)


def candidate_is_right(task: Task, text: str) -> bool:
    """Whether a candidate reply solves the built-in task (as the sim's judge sees it)."""
    if task.kind == "code":
        blocks = _CODE_RE.findall(text)
        return bool(blocks) and blocks[-1].strip() == (task.solution or "").strip()
    found = _ANSWER_RE.findall(text)
    if not found or task.answer is None:
        return False
    try:
        got = float(found[-1].replace(",", ""))
        want = float(task.answer.replace(",", ""))
    except ValueError:
        return found[-1].strip() == task.answer.strip()
    return abs(got - want) <= 1e-6 * max(1.0, abs(want))


def _is_right(task_id: str, text: str) -> bool:
    task = builtin_task(task_id)
    return task is not None and candidate_is_right(task, text)


def _judge(prompt: str, a: str, b: str, rng: random.Random) -> str:
    """``A``, ``B`` or ``TIE``: prefers the right candidate, with noise and a bias to A."""
    match = _TASK_ID_RE.search(prompt)
    task = builtin_task(match.group(1)) if match else None
    if task is not None:
        right_a = candidate_is_right(task, a)
        right_b = candidate_is_right(task, b)
    else:
        right_a = right_b = False
    roll = rng.random()
    if right_a and not right_b:
        return "A" if roll < 0.90 else ("TIE" if roll < 0.96 else "B")
    if right_b and not right_a:
        return "B" if roll < 0.82 else ("TIE" if roll < 0.92 else "A")
    return "A" if roll < 0.42 else ("B" if roll < 0.72 else "TIE")
