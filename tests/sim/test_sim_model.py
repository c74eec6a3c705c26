"""The simulated model's statistics: accuracy vs difficulty, scattered wrong answers, judging."""

from __future__ import annotations

import re
import statistics
from collections import Counter

import openai

from eloledger.sim import running_sim
from eloledger.sim.model import candidate_is_right, generate, make_rng, p_correct
from eloledger.tasks import load_tasks

ARITH = load_tasks("builtin:arith")
CODE = load_tasks("builtin:code")


def _sample(task, i: int, *, model: str = "sim-small", temperature: float = 0.8, seed: int = 0):
    rng = make_rng(seed, model, temperature, str(i), task.prompt)
    return generate(task.prompt, model=model, temperature=temperature, rng=rng)


def _accuracy(tasks, n: int = 30, **kwargs) -> float:
    hits = [candidate_is_right(t, _sample(t, i, **kwargs).text) for t in tasks for i in range(n)]
    return sum(hits) / len(hits)


def test_accuracy_tracks_difficulty_and_model_size() -> None:
    easy = [t for t in ARITH if t.difficulty < 0.2]
    mid = [t for t in ARITH if 0.4 <= t.difficulty <= 0.65]
    hard = [t for t in ARITH if t.difficulty > 0.85]
    acc = [_accuracy(group) for group in (easy, mid, hard)]
    assert acc[0] > 0.9
    assert 0.35 < acc[1] < 0.85
    assert acc[2] < 0.15  # nearly impossible: best-of-n shows diminishing returns
    assert _accuracy(mid, model="sim-large") > acc[1] + 0.1
    code_easy = [t for t in CODE if t.difficulty < 0.3]
    code_hard = [t for t in CODE if t.difficulty > 0.8]
    assert _accuracy(code_easy) > 0.85 > 0.3 > _accuracy(code_hard)


def test_formula_matches_the_documented_shape() -> None:
    assert p_correct(0.05, 0.7, "sim-small") > 0.98
    assert 0.4 < p_correct(0.55, 0.7, "sim-small") < 0.6
    assert p_correct(0.98, 0.7, "sim-small") < 0.03
    assert p_correct(0.5, 1.5, "sim-small") < p_correct(0.5, 0.7, "sim-small")


def _answer(text: str) -> str | None:
    found = re.findall(r"Answer: (\S+)", text)
    return found[-1] if found else None


def test_wrong_answers_scatter_with_attractors_and_majority_vote_helps() -> None:
    mid = [t for t in ARITH if 0.45 <= t.difficulty <= 0.62]
    for task in mid[:3]:
        answers = [_answer(_sample(task, i).text) for i in range(200)]
        wrong = Counter(a for a in answers if a != task.answer)
        assert len(wrong) >= 8  # scattered over many values
        top_two = sum(n for _, n in wrong.most_common(2)) / sum(wrong.values())
        assert 0.25 < top_two < 0.75  # but with repeated "attractor" mistakes
    single = vote = 0
    trials = 0
    for task in mid:
        for group in range(12):
            answers = [_answer(_sample(task, group * 9 + j).text) for j in range(9)]
            single += answers[0] == task.answer
            vote += Counter(answers).most_common(1)[0][0] == task.answer
            trials += 1
    assert vote / trials > single / trials + 0.1


def test_temperature_zero_is_greedy_and_higher_temperature_more_diverse() -> None:
    task = next(t for t in ARITH if 0.5 <= t.difficulty <= 0.6)
    assert len({_sample(task, i, temperature=0.0).text for i in range(5)}) == 1
    cold = Counter(_answer(_sample(task, i, temperature=0.3).text) for i in range(300))
    hot = Counter(_answer(_sample(task, i, temperature=1.3).text) for i in range(300))
    assert len(hot) > len(cold)


def test_token_counts_are_realistic() -> None:
    lengths = {t.task_id: [len(_sample(t, i).pieces) for i in range(10)] for t in ARITH}
    flat = [n for ns in lengths.values() for n in ns]
    assert min(flat) >= 20 and max(flat) <= 700
    easy = statistics.mean(n for t in ARITH if t.difficulty < 0.2 for n in lengths[t.task_id])
    hard = statistics.mean(n for t in ARITH if t.difficulty > 0.85 for n in lengths[t.task_id])
    assert 30 < easy < 120 and 180 < hard < 450
    assert len(set(flat)) > 50  # varies


def _judge_prompt(task, a: str, b: str) -> str:
    return (
        "Compare two answers to the task below. Reply with A, B or TIE.\n"
        f"TASK_ID: {task.task_id}\n\n{task.prompt}\n\n"
        f"<<<A>>>\n{a}\n<<<END A>>>\n\n<<<B>>>\n{b}\n<<<END B>>>\n"
    )


def test_judge_prefers_the_right_candidate_with_noise_and_position_bias() -> None:
    task = ARITH[12]
    right = f"Working...\nAnswer: {task.answer}"
    wrong = f"Working...\nAnswer: {int(task.answer) + 3}"
    with running_sim(speed=100) as sim:
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)

        def verdicts(a: str, b: str, n: int) -> Counter:
            out = Counter()
            for i in range(n):
                reply = client.chat.completions.create(
                    model="sim-large",
                    messages=[{"role": "user", "content": _judge_prompt(task, a, b)}],
                    temperature=0.7,
                    extra_headers={"x-sim-sample": str(i)},
                )
                out[reply.choices[0].message.content] += 1
            return out

        first = verdicts(right, wrong, 40)
        second = verdicts(wrong, right, 40)
    assert set(first) | set(second) <= {"A", "B", "TIE"}
    assert first["A"] >= 28 and second["B"] >= 24
    # Both wrong: no right answer to find, but A is picked more often than B.
    both_wrong = Counter()
    for i in range(400):
        rng = make_rng(0, "sim-small", 0.7, str(i), "both wrong")
        text = generate(
            _judge_prompt(task, wrong, wrong), model="sim-small", temperature=0.7, rng=rng
        )
        both_wrong[text.text] += 1
    assert both_wrong["A"] > both_wrong["B"] * 1.15 and both_wrong["TIE"] > 40


def test_code_replies_carry_the_solution_or_a_buggy_variant() -> None:
    task = next(t for t in CODE if 0.4 <= t.difficulty <= 0.6)
    kinds = Counter()
    for i in range(60):
        text = _sample(task, i).text
        block = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[-1]
        if block == task.solution:
            kinds["right"] += 1
        else:
            assert block in task.buggy
            kinds["buggy"] += 1
        assert candidate_is_right(task, text) == (block == task.solution)
    assert kinds["right"] > 5 and kinds["buggy"] > 5


def test_same_seed_reproduces_across_servers_and_other_seeds_differ() -> None:
    task = ARITH[25]
    texts = [_sample(task, 3, seed=s).text for s in (7, 7, 8, 9, 10)]
    assert texts[0] == texts[1]
    assert len(set(texts[1:])) > 1


def test_unknown_prompt_gets_a_filler_reply_saying_it_is_simulated() -> None:
    rng = make_rng(0, "sim-small", 1.0, "x", "hello")
    reply = generate("Tell me a joke", model="sim-small", temperature=1.0, rng=rng)
    assert "simulator" in reply.text and 20 <= len(reply.pieces) <= 200
