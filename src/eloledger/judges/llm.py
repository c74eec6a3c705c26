"""LLM pairwise judge: the prompt (a fixed, documented format) and the verdict parser.

The prompt puts the two candidates between ``<<<A>>>``/``<<<END A>>>`` and
``<<<B>>>``/``<<<END B>>>`` markers and names the task with a ``TASK_ID:`` line; the judge
answers ``A``, ``B`` or ``TIE``. Every pair is judged in both orders and the two verdicts are
averaged, which cancels a judge's preference for the first (or second) position.
"""

from __future__ import annotations

import re

JUDGE_INSTRUCTIONS = (
    "You are judging two answers to the same task. Decide which answer is correct and better. "
    "Reply with exactly one word: A, B or TIE."
)

# Capital A/B only: "a" is an English word ("a fine answer"), "A" in a sentence is a verdict.
_VERDICT = re.compile(r"\b(TIE|Tie|tie|A|B)\b")
_ONLY = re.compile(r"^\W*(?:verdict\s*:?\s*|answer\s*:?\s*)?(tie|a|b)\W*$", re.I)
_VALUE = {"TIE": 0.5, "A": 1.0, "B": 0.0}  # preference for A


def judge_prompt(task_id: str, task_prompt: str, answer_a: str, answer_b: str) -> str:
    return (
        f"{JUDGE_INSTRUCTIONS}\n\n"
        f"TASK_ID: {task_id}\n"
        f"Task:\n{task_prompt}\n\n"
        f"<<<A>>>\n{answer_a}\n<<<END A>>>\n\n"
        f"<<<B>>>\n{answer_b}\n<<<END B>>>\n\n"
        "Which answer is better? Reply A, B or TIE."
    )


def parse_verdict(text: str | None) -> float | None:
    """1.0 if A wins, 0.0 if B wins, 0.5 for a tie; None when the reply names no verdict."""
    if not text:
        return None
    only = _ONLY.match(text.strip())
    if only:
        return _VALUE[only.group(1).upper()]
    head = text.strip()
    for word, value in _VALUE.items():
        if re.match(rf"\W*{word}\b", head, re.I if word == "TIE" else 0):
            return value
    found = _VERDICT.findall(head)
    return _VALUE[found[-1].upper()] if found else None


def both_orders(first: float | None, second: float | None) -> float | None:
    """Preference for X given verdicts on (X as A, Y as B) and (Y as A, X as B).

    Both orders are needed: one order alone carries the judge's position bias uncorrected, and
    filling the missing order with a tie would invent half a draw. A match missing a verdict in
    either order is no preference (None): the caller counts it as no verdict and leaves it out.
    """
    if first is None or second is None:
        return None
    return (first + (1.0 - second)) / 2.0
