"""The proxy tests judge: what crosses, what it can judge, and the ``[judge] sandbox`` key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger import sandbox
from eloledger.errors import UserError
from eloledger.judges.code import judge_tests

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _code(text: str) -> str:
    return f"```python\n{text}\n```"


@pytest.fixture(params=["bwrap", "none"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "bwrap":
        try:
            sandbox.resolve("auto")
        except UserError as exc:
            pytest.skip(f"no sandbox here: {exc}")
    return request.param


def test_plain_data_round_trips_and_exceptions_cross_by_builtin_name(kind: str) -> None:
    code = """
class CycleError(ValueError):
    pass
def shapes():
    return (1, 2.5, "s", None, True, [1, [2]], {"k": (3,)}, {1, 2}, b"\\x00", float("inf"))
def topo(graph):
    raise CycleError("cycle")
def boom():
    raise SystemExit(0)
"""
    tests = """
assert shapes() == (1, 2.5, "s", None, True, [1, [2]], {"k": (3,)}, {1, 2}, b"\\x00", float("inf"))
try:
    topo({})
except ValueError as exc:
    assert "cycle" in str(exc)
else:
    raise AssertionError("no error")
try:
    boom()
except RuntimeError:
    pass
"""
    verdict = judge_tests(_code(code), tests, sandbox_kind=kind)
    assert verdict.passed, verdict.detail
    assert verdict.sandbox == kind


def test_objects_come_back_as_references_with_no_truth_value(kind: str) -> None:
    code = """
class Stack:
    def __init__(self):
        self.items = []
    def push(self, x):
        self.items.append(x)
    def __len__(self):
        return len(self.items)
    def __bool__(self):
        return True
    def __eq__(self, other):
        return True
def make():
    return Stack()
"""
    tests = """
s = make()
s.push(3)
assert len(s) == 1 and s.items == [3]
assert s == 1
assert s
"""
    verdict = judge_tests(_code(code), tests, sandbox_kind=kind)
    # of the four checks (setup ``s = make()`` is not one) the call and the plain-data assert hold
    assert verdict.score == pytest.approx(2 / 4) and not verdict.passed
    assert "no truth value" in (verdict.detail or "") or "AssertionError" in (verdict.detail or "")


def test_callbacks_and_in_place_mutation_are_not_judgeable(kind: str) -> None:
    """Documented limits: functions do not cross, arguments are copies."""
    code = "def apply(f, x):\n    return f(x)\ndef sort_in_place(xs):\n    xs.sort()\n"
    tests = "assert apply(lambda v: v + 1, 1) == 2\nxs = [2, 1]\nsort_in_place(xs)\nassert xs == [1, 2]\n"
    verdict = judge_tests(_code(code), tests, sandbox_kind=kind)
    # only the call ``sort_in_place(xs)`` runs without an error; both asserts fail
    assert verdict.score == pytest.approx(1 / 3) and not verdict.passed
    assert "plain data" in (verdict.detail or "")


def test_the_candidate_cannot_see_the_tests() -> None:
    try:
        sandbox.resolve("auto")
    except UserError as exc:
        pytest.skip(f"no sandbox here: {exc}")
    code = (
        "import glob, os\nFOUND = [p for root in ['/tmp', '/src', '/judge', '/.eloledger']\n"
        "         for p in glob.glob(root + '/**', recursive=True) if 'tests' in p]\n"
        "FOUND += [p for p in os.listdir('/') if 'judge' in p]\n"
        "def f():\n    return FOUND\n"
    )
    verdict = judge_tests(_code(code), "SECRET = 41\nassert f() == []\n", sandbox_kind="bwrap")
    assert verdict.passed, verdict.detail


def test_sandbox_key_is_checked_in_the_spec(tmp_path: Path) -> None:
    from eloledger.runner.spec import load_spec

    path = tmp_path / "spec.toml"
    path.write_text(
        '[experiment]\nname = "x"\nprofile = "sim"\n[tasks]\nsource = "builtin:code"\n'
        '[[arms]]\nname = "a"\n[judge]\nsandbox = "chroot"\n'
    )
    with pytest.raises(UserError) as err:
        load_spec(path)
    assert "spec.toml:9" in err.value.one_line() and "auto, bwrap, none" in err.value.one_line()
    path.write_text(path.read_text().replace('"chroot"', '"none"'))
    assert load_spec(path).judge.sandbox == "none"


def _run(spec: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0"],
        capture_output=True, text=True, env=env, timeout=300, cwd=spec.parent,
    )  # fmt: skip


def _spec(tmp_path: Path, judge: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(
        '[experiment]\nname = "x"\nprofile = "sim"\nledger = "run.jsonl"\n'
        '[tasks]\nsource = "builtin:code"\nlimit = 2\n[[arms]]\nname = "a"\n'
        f"[judge]\n{judge}\n"
    )
    return path


def test_a_run_refuses_without_a_sandbox_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "PATH": str(tmp_path / "empty")}  # no bwrap
    done = _run(_spec(tmp_path, 'kind = "tests"'), env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "spec.toml" in lines[0] and "bubblewrap" in lines[0] and 'sandbox = "none"' in lines[0]
    assert not (tmp_path / "run.jsonl").exists()  # refused before any request


def test_sandbox_none_runs_and_says_so_loudly(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(_spec(tmp_path, 'sandbox = "none"')),
         "--headless", "--bootstrap", "0"],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "UNSANDBOXED" in done.stdout + done.stderr
    rows = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    judged = [r for r in rows if r.get("role") == "sample" and r.get("status") == "ok"]
    assert judged and {r.get("sandbox") for r in judged} == {"none"}
