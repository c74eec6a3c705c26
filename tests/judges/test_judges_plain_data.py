"""Calls into the candidate return plain data or fail: every idiom, honest code and forgery.

A forgery here is a candidate that cannot compute the answer and tries to make the tests
side believe it anyway: raising ``StopIteration`` to end the tests' own ``map``/``filter``
early, or returning an object that answers "yes" to ``in`` and to every method.
"""

from __future__ import annotations

import pytest

from eloledger.judges.code import judge_tests
from sandbox_support import need_sandbox

IS_PRIME = "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, n))\n"
STOP = "def is_prime(n):\n    raise StopIteration\n"
PRIMES = "def primes_below(n):\n    return [p for p in range(2, n) if all(p % d for d in range(2, p))]\n"
PRIMES_LAZY = "def primes_below(n):\n    return (p for p in range(2, n) if all(p % d for d in range(2, p)))\n"
SLUGIFY = "def slugify(text):\n    return '-'.join(text.lower().split())\n"
YES = """
class Yes:
    def __contains__(self, item):
        return True
    def __iter__(self):
        raise TypeError("no items")
    def startswith(self, prefix):
        return True
    def __getattr__(self, name):
        return lambda *a, **k: True
    def __eq__(self, other):
        return True
def primes_below(n):
    return Yes()
def slugify(text):
    return Yes()
"""
IDIOMS = {
    "all_map": ("assert all(map(is_prime, [2, 3, 5, 7]))", IS_PRIME, STOP),
    "not_any_map": ("assert not any(map(is_prime, [4, 6, 8, 9]))", IS_PRIME, STOP),
    "filter_empty": ("assert list(filter(is_prime, [4, 6, 8])) == []", IS_PRIME, STOP),
    "in_result": ("assert 7 in primes_below(10)", PRIMES, YES),
    "in_lazy_result": ("assert 7 in primes_below(10)", PRIMES_LAZY, YES),
    "str_method": ("assert slugify('A B').startswith('a-')", SLUGIFY, YES),
    "str_method_by_getattr": ("assert slugify('A B').lower() == 'a-b'", SLUGIFY, YES),
}


def _code(text: str) -> str:
    return f"```python\n{text}\n```"


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_honest_code_passes_and_the_forgery_fails(idiom: str) -> None:
    kind = need_sandbox()
    tests, honest, forged = IDIOMS[idiom]
    good = judge_tests(_code(honest), tests, sandbox_kind=kind)
    assert good.passed and good.score == 1.0, good.detail
    bad = judge_tests(_code(forged), tests, sandbox_kind=kind)
    assert not bad.passed and bad.score == 0, bad.detail


def test_stop_iteration_from_the_candidate_is_an_error_not_an_end() -> None:
    kind = need_sandbox()
    tests = "for n in [2, 3]:\n    assert is_prime(n)\n"
    verdict = judge_tests(_code(STOP), tests, sandbox_kind=kind)
    assert not verdict.passed and "RuntimeError" in (verdict.detail or "")
    assert "StopIteration" in (verdict.detail or "")


def test_subclasses_of_builtins_cross_as_the_builtin() -> None:
    """A Counter, a namedtuple or a str subclass is compared by its builtin value, not by
    the subclass's own ``__eq__`` or ``__str__``."""
    kind = need_sandbox()
    code = """
import collections
Point = collections.namedtuple("Point", "x y")
class Loud(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
    def __str__(self):
        return "forged"
def counts(text):
    return collections.Counter(text)
def point():
    return Point(1, 2)
def word():
    return Loud("real")
"""
    tests = """
assert counts("aab") == {"a": 2, "b": 1}
assert point() == (1, 2)
assert word() == "real" and str(word()) == "real" and word().upper() == "REAL"
assert word() != "forged"
"""
    verdict = judge_tests(_code(code), tests, sandbox_kind=kind)
    assert verdict.passed and verdict.score == 1.0, verdict.detail


def test_a_candidate_object_has_only_the_attributes_it_really_has() -> None:
    kind = need_sandbox()
    code = """
class Stack:
    def __init__(self):
        self.items = []
    def push(self, x):
        self.items.append(x)
    def pop(self):
        return self.items.pop()
    def __getattr__(self, name):
        return True
def make():
    return Stack()
"""
    tests = "s = make()\ns.push(3)\nassert s.pop() == 3\nassert s.is_empty\n"
    verdict = judge_tests(_code(code), tests, sandbox_kind=kind)
    assert verdict.score == pytest.approx(2 / 3) and "AttributeError" in (verdict.detail or "")
