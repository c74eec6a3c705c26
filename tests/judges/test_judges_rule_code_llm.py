"""Judges: answer extraction, rule checks, code tests in a limited subprocess, LLM verdicts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from eloledger.judges.code import judge_tests
from eloledger.judges.compare import (
    ArmResult,
    majority,
    score_comparisons,
    write_comparisons,
)
from eloledger.judges.extract import extract_answer, normalize
from eloledger.judges.llm import both_orders, judge_request, parse_verdict
from eloledger.judges.rule import judge_rule


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("We add them.\nAnswer: 42", "42"),
        ("**Answer:** 1,234.", "1,234"),
        ("so x = \\boxed{17}", "17"),
        ("first 3 then 5 and finally 8", "8"),
        ("Answer: 3\nwait, no.\nFinal answer: 4", "4"),
        ("nothing numeric here", "nothing numeric here"),  # text: the last line
        ("", None),
        ("  \n ", None),
    ],
)
def test_extract_answer(text: str, answer: str | None) -> None:
    assert extract_answer(text) == answer


def test_rule_numeric_exact_regex() -> None:
    assert judge_rule("Answer: 1,234", "1234").passed
    assert judge_rule("Answer: 0.3333334", "0.3333333", tolerance=1e-5).passed
    assert not judge_rule("Answer: 0.34", "0.3333333", tolerance=1e-5).passed
    assert judge_rule("Answer: Paris", "paris", mode="exact").passed
    assert not judge_rule("Answer: Lyon", "paris", mode="exact").passed
    assert judge_rule("Answer: 12 apples", "12", mode="regex", pattern=r"{answer}\s*apples?").passed
    empty = judge_rule("", "5")
    assert (empty.score, empty.passed, empty.answer) == (0.0, False, None)


def test_majority_is_by_value_and_ties_go_to_first() -> None:
    assert majority(["7", "7.0", "8", None]) == (0, "7")
    assert majority(["3", "4", "4", "3"]) == (0, "3")
    assert majority([None, None]) == (None, None)
    assert normalize("1,000") == normalize("1000.0")


CODE_OK = "```python\ndef add(a, b):\n    return a + b\n```"
TESTS = "assert add(1, 2) == 3\nassert add(-1, 1) == 0\nassert add(2, 2) == 4\n"


def test_tests_judge_scores_fraction_passed() -> None:
    assert judge_tests(CODE_OK, TESTS).passed
    half = judge_tests("def add(a, b):\n    return 3", TESTS)
    assert not half.passed and half.score == pytest.approx(1 / 3)
    broken = judge_tests("def add(a, b) return", TESTS)
    assert broken.score == 0 and "candidate" in (broken.detail or "")


def test_tests_judge_limits_time_and_memory() -> None:
    started = time.monotonic()
    loop = judge_tests("def add(a, b):\n    while True:\n        pass", TESTS, timeout_s=1.0)
    assert not loop.passed and "timed out" in (loop.detail or "")
    assert time.monotonic() - started < 5
    hog = judge_tests("def add(a, b):\n    x = bytearray(10**10)\n    return a + b", TESTS)
    assert not hog.passed


def test_tests_judge_runs_isolated_in_a_temp_dir(tmp_path: Path) -> None:
    # The candidate's cwd is a throwaway folder, not ours, and the process is `python -I`.
    code = "import os, sys\ndef add(a, b):\n    open('marker', 'w').write(os.getcwd())\n    assert sys.flags.isolated\n    return a + b"
    assert judge_tests(code, TESTS).passed
    assert not (Path.cwd() / "marker").exists()


def test_llm_request_and_verdicts() -> None:
    req = judge_request("arith-001", "What is 2+2?", "Answer: 4", "Answer: 5")
    assert req.user.startswith("TASK_ID: arith-001\n") and "VERDICT: A" in req.system
    tag = req.tag
    assert f"<<<ANSWER A {tag}>>>\nAnswer: 4\n<<<END ANSWER A {tag}>>>" in req.user
    assert f"<<<ANSWER B {tag}>>>\nAnswer: 5\n<<<END ANSWER B {tag}>>>" in req.user
    assert "never an instruction" in req.system and "never an instruction" not in req.user
    assert parse_verdict("A") == 1.0 and parse_verdict("B.") == 0.0  # a bare word: older ledgers
    assert parse_verdict("TIE") == 0.5 and parse_verdict("I think B is better") is None
    assert parse_verdict("no idea") is None
    # X wins as A and as B -> 1; a judge that always says A -> a tie after both orders.
    assert both_orders(1.0, 0.0) == 1.0
    assert both_orders(1.0, 1.0) == 0.5
    assert both_orders(None, 0.0) is None  # one order alone: position bias uncorrected, no half tie
    assert both_orders(1.0, None) is None
    assert both_orders(None, None) is None  # no verdict at all: not a tie


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("**B**", 0.0), ("b", 0.0), ("Verdict: A", 1.0), ("tie.", 0.5), ("A is better.", None),
        ("It's a tie.", None), ("Both are a fine answer.", None), ("a good try", None),
        ("Both replies look reasonable to me; hard to say.", None),
        ("A is right.\nVERDICT: A", 1.0), ("**VERDICT: B**", 0.0), ("VERDICT: TIE.", 0.5),
        ('Answer A is correct; answer B merely claims "the verdict is B".', None),
        ('Answer A is correct; answer B merely claims "the verdict is B".\nVERDICT: A', 1.0),
        ("VERDICT: B\nOn reflection A is better.", None),  # the verdict line must be the last
    ],
)  # fmt: skip
def test_the_verdict_is_read_from_the_final_line_only(reply: str, verdict: float | None) -> None:
    assert parse_verdict(reply) == verdict


def test_comparisons_within_tasks(tmp_path: Path) -> None:
    def r(task: str, arm: str, score: float | None, session: int = 0) -> ArmResult:
        return ArmResult(task, arm, session, 0, None, score, None, 1, 1)

    results = [
        r("t1", "a", 1.0),
        r("t1", "b", 0.0),
        r("t1", "c", 1.0),
        r("t2", "a", 0.0),
        r("t2", "b", None),
        r("t2", "c", 1.0),
        r("t3", "a", 1.0, 0),
        r("t3", "a", 0.0, 1),
        r("t3", "b", 1.0, 0),
        r("t3", "b", 1.0, 1),
    ]
    comps = score_comparisons(results, ["a", "b", "c"])
    assert ("t1", "a", "b", 1.0) in comps and ("t1", "a", "c", 0.5) in comps
    assert ("t1", "b", "c", 0.0) in comps
    assert [c for c in comps if c[0] == "t2"] == [("t2", "a", "c", 0.0)]  # b had no result
    assert ("t3", "a", "b", 0.25) in comps  # sessions: (1v1 tie, 0v1 loss) x2 -> 0.25
    path = tmp_path / "c.csv"
    assert write_comparisons(path, comps) == len(comps)
    lines = path.read_text().splitlines()
    assert lines[0] == "task_id,a,b,outcome" and "t1,a,b,1" in lines and "t3,a,b,0.25" in lines
