"""Text answers: a short reply, or the last line of a reply, is judged as the answer.

The decorations a model adds (case, surrounding punctuation, quotes, **bold**, `code`,
"Answer:"/"Final answer:" prefixes) never change the verdict; numeric and \\boxed{} answers
keep their own rules.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eloledger.judges.extract import extract_answer, normalize
from eloledger.judges.rule import judge_rule

WORDS = st.text(alphabet=string.ascii_letters, min_size=1, max_size=12)
ANSWERS = st.lists(WORDS, min_size=1, max_size=3).map(" ".join)
WRAPS = st.sampled_from(["{}", "**{}**", "`{}`", '"{}"', "'{}'", "*{}*", "_{}_", "“{}”", "({})"])
PREFIXES = st.sampled_from(["", "Answer: ", "Final answer: ", "answer = ", "The answer is "])
TAILS = st.sampled_from(["", ".", "!", "?", " .", ";"])
CASES = st.sampled_from([str, str.lower, str.upper, str.title])
PREAMBLE = st.lists(
    st.sampled_from(["Let me think.", "Step 1: read the task.", "", "So, overall:"]), max_size=3
)


def test_a_bare_reply_is_the_answer() -> None:
    # once: "pong" answered "pong" scored 0
    verdict = judge_rule("pong", "pong")
    assert verdict.passed and verdict.score == 1.0 and verdict.answer == "pong"


@settings(max_examples=300, deadline=None)
@given(ANSWERS, WRAPS, PREFIXES, TAILS, CASES, PREAMBLE)
def test_decorated_last_line_is_judged_as_the_answer(
    answer: str, wrap: str, prefix: str, tail: str, case, preamble: list[str]
) -> None:
    line = prefix + wrap.format(case(answer)) + tail
    reply = "\n".join([*preamble, line, ""])
    verdict = judge_rule(reply, answer)
    assert verdict.passed, (reply, verdict)


@settings(max_examples=200, deadline=None)
@given(ANSWERS, ANSWERS, WRAPS, PREAMBLE)
def test_a_different_last_line_fails(
    answer: str, other: str, wrap: str, preamble: list[str]
) -> None:
    if normalize(answer) == normalize(other):
        return
    reply = "\n".join([*preamble, wrap.format(other)])
    assert not judge_rule(reply, answer).passed


@pytest.mark.parametrize("word", ["NaN", "nan", "inf", "Infinity", "-inf"])
def test_words_that_float_reads_are_text_answers(word: str) -> None:
    # found by the hypothesis test above: "NAN" was read as a number never equal to itself
    assert judge_rule(word, word).passed
    assert judge_rule(f"**{word.upper()}**", word).passed


def test_the_answer_must_be_the_last_line_not_any_line() -> None:
    assert not judge_rule("pong\nActually, it is ping.", "pong").passed
    assert judge_rule("It could be ping.\nFinal answer: **Pong**", "pong").passed


def test_numeric_and_boxed_behaviour_is_kept() -> None:
    assert judge_rule("24 - 9 = 15, so 15 muffins are left.", "15").passed
    assert judge_rule("We get \\boxed{15}. Checking: 15 + 9 = 24", "15").passed
    assert judge_rule("Answer: 1,234", "1234").passed
    assert not judge_rule("24 - 9 = 14", "15").passed
    assert extract_answer("24 - 9 = 15, so 15 muffins are left.") == "15"
    # a text reply with no number still yields an answer for voting and the results file
    assert extract_answer("Let me see.\n**Paris**.") == "Paris"


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**6), 10**6), PREAMBLE)
def test_numbers_still_come_from_the_last_number(value: int, preamble: list[str]) -> None:
    reply = "\n".join([*preamble, f"After the steps 3 + 4 the result is {value}."])
    assert judge_rule(reply, str(value)).passed


def test_regex_mode_sees_the_cleaned_last_line() -> None:
    verdict = judge_rule("thinking...\n**Pong!**", "pong", mode="regex", pattern="{answer}!?")
    assert verdict.passed
