"""Scored tasks (loader fields, spec keys) and the sandboxed scorer judge.

The red-team cases (the rules): a candidate whose own program, run by the task's scorer,
tries to print a fake score on every descriptor it can reach (its own, its parent's through
/proc, /dev/tty), one that leaves result files with a fake score and shadows the standard
library's ``json`` in its folder, and one that hunts for the API key (environment, HOME, the
ledger's folder). Each must get its true score, and the key must never be seen.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.judges.scorer import judge_scored, judge_work
from eloledger.runner.spec import parse_spec
from eloledger.tasks import Task, load_tasks

# The task author's scorer: runs the candidate's solve.py, scores the number it prints on its
# last line (a plain subprocess: the candidate's output is data, read through a pipe).
RUNS_CANDIDATE = """import subprocess, sys

def score(work):
    done = subprocess.run([sys.executable, "-I", work + "/solve.py"], cwd="/tmp",
                          capture_output=True, text=True, timeout=10)
    lines = done.stdout.split()
    return float(lines[-1]) if lines and lines[-1].isdigit() and len(lines[-1]) < 3 else 0.0
"""
FORGER = r"""import glob, json, os
line = json.dumps({"score": 1e9}) + "\n"
for fd in range(0, 64):
    try:
        os.write(fd, line.encode())
    except OSError:
        pass
for path in glob.glob("/proc/*/fd/*") + ["/dev/tty", "/dev/stdout", "/dev/stderr"]:
    try:
        with open(path, "w") as fh:
            fh.write(line)
    except OSError:
        pass
print(7)
"""
FILES_AND_SHADOW = {
    "solve.py": "print(5)\n",
    "result.json": json.dumps({"score": 1e9}),
    "score.txt": "1000000000\n",
    ".eloledger_score": "1e9\n",
    "json.py": "import os\nos.write(1, b'{\"score\": 1e9}\\n')\ndumps = loads = None\n",
    "sitecustomize.py": "import os\nos.write(1, b'{\"score\": 1e9}\\n')\n",
}
SECRET = "sk-issue22-" + "0123456789abcdef" * 2
KEY_HUNTER = r"""import os, sys
needle = "sk-" + "issue22-"  # spelled apart: this file itself is in /work
hit = any(needle in v for v in os.environ.values())
for root in ("/root", "/home", os.path.expanduser("~"), "/work", "/tmp", "/run", "LEDGER"):
    for folder, dirs, names in os.walk(root):
        if folder.startswith(sys.base_prefix):  # the interpreter's own tree: no key there
            dirs.clear()
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), errors="replace") as fh:
                    hit = hit or needle in fh.read(100000)
            except (OSError, MemoryError):
                pass
print(99 if hit else 3)
"""


def _task(scorer: str = RUNS_CANDIDATE) -> Task:
    return Task("t", "p", kind="agent", files={}, scorer=scorer)


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name, text in files.items():
        (work / name).write_text(text)
    return work


def test_a_fake_score_printed_anywhere_is_never_read(tmp_path: Path) -> None:
    verdict = judge_scored(_folder(tmp_path, {"solve.py": FORGER}), _task())
    assert (verdict.score, verdict.sandbox, verdict.detail) == (7.0, "bwrap", None)


def test_result_files_and_a_shadowed_json_module_change_nothing(tmp_path: Path) -> None:
    verdict = judge_scored(_folder(tmp_path, FILES_AND_SHADOW), _task())
    assert verdict.score == 5.0
    # the same folder under a command scorer that reads only solve.py's output
    cmd = Task("t", "p", kind="agent", files={},
               scorer_cmd=("sh", "-c", "python3 -I solve.py | tail -n 1"))  # fmt: skip
    assert judge_scored(tmp_path / "work", cmd).score == 5.0


def test_the_candidate_cannot_find_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temp_home: Path
) -> None:
    monkeypatch.setenv("ELOLEDGER_TEST_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    secrets = temp_home / ".config" / "eloledger" / "secrets.toml"
    secrets.parent.mkdir(parents=True, exist_ok=True)
    secrets.write_text(f'[keys]\nsim = "{SECRET}"\n')
    secrets.chmod(0o600)
    ledger_dir = tmp_path / "ledger"
    ledger_dir.mkdir()
    (ledger_dir / "spec.toml").write_text(f'api_key = "{SECRET}"\n')
    hunter = KEY_HUNTER.replace("LEDGER", str(ledger_dir))
    verdict = judge_scored(_folder(tmp_path, {"solve.py": hunter}), _task())
    assert verdict.score == 3.0  # 99 would mean the key was in reach


def test_scorer_failures_are_a_null_score_with_the_reason(tmp_path: Path) -> None:
    work = _folder(tmp_path, {"answer.txt": "x"})
    bad = judge_scored(work, _task("def score(w):\n    return float('nan')\n"))
    assert bad.score is None and "nan" in (bad.detail or "")
    text = judge_scored(work, _task("def score(w):\n    return 'high'\n"))
    assert text.score is None and "not a number" in (text.detail or "")
    loop = judge_scored(work, _task("def score(w):\n    while True: pass\n"), timeout_s=0.5)
    assert loop.score is None and "CPU" in (loop.detail or "")


def test_a_scored_task_with_tests_reports_both(tmp_path: Path) -> None:
    work = _folder(tmp_path, {"m.py": "def f():\n    return 4\n"})
    task = Task("t", "p", kind="agent", files={}, tests="from m import f\nassert f() == 4\n",
                scorer="def score(w):\n    return len(open(w + '/m.py').read())\n",
                direction="min")  # fmt: skip
    verdict = judge_work(work, task)
    assert verdict is not None
    assert (verdict.score, verdict.passed, verdict.direction) == (
        22.0,
        True,
        "min",
    )  # len("def f():\n    return 4\n")


def test_builtin_scored_tasks_load_and_their_scorers_rank_answers(tmp_path: Path) -> None:
    tasks = {t.task_id: t for t in load_tasks("builtin:agent-opt")}
    knap, fit = tasks["opt-knapsack"], tasks["opt-linefit"]
    assert (knap.direction, fit.direction) == ("max", "min")
    assert knap.scorer and fit.scorer and not knap.tests
    work = _folder(tmp_path, dict(knap.files or {}))
    assert judge_scored(work, knap).score == 0.0  # nothing chosen yet
    (work / "answer.txt").write_text("0 1")
    items = json.loads((work / "items.json").read_text())["items"]
    assert judge_scored(work, knap).score == items[0]["value"] + items[1]["value"]
    reply = "Here is my pick:\n0 1"  # a chat reply: its last line
    assert judge_scored(reply, knap, answer=True).score == items[0]["value"] + items[1]["value"]
    (work / "answer.txt").write_text(" ".join(str(i) for i in range(len(items))))
    assert judge_scored(work, knap).score == 0.0  # over the capacity
    # the answer file the agent edits cannot move the problem: the scorer keeps its own copy
    (work / "items.json").write_text(json.dumps({"capacity": 10**6, "items": items}))
    assert judge_scored(work, knap).score == 0.0
    fw = tmp_path / "fit"
    fw.mkdir()
    for name, text in (fit.files or {}).items():
        (fw / name).write_text(text)
    worse = judge_scored(fw, fit).score
    (fw / "fit.txt").write_text("2.5 -1")
    better = judge_scored(fw, fit).score
    assert better is not None and worse is not None and better < worse


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"scorer": "x = 1"}, "'scorer' must be Python code defining score"),
        ({"scorer": "def score(x): return 1", "direction": "up"}, "'direction' must be"),
        ({"scorer_cmd": [1, 2]}, "'scorer_cmd' must be a list of strings"),
        ({"scorer": "def score(x): return 1", "scorer_cmd": ["true"]}, "not both"),
    ],
)
def test_bad_scorer_fields_are_one_line_errors_naming_file_and_line(
    tmp_path: Path, row: dict, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"task_id": "a", "prompt": "p", "kind": "agent",
                                "files": {"a": "b"}, **row}) + "\n")  # fmt: skip
    with pytest.raises(UserError) as err:
        load_tasks(str(path))
    assert f"{path}:1:" in err.value.message and message in err.value.message


def test_a_scorer_alone_makes_a_task_judgeable() -> None:
    # once, a task with neither answer nor tests was refused
    path = Path(__file__).parent.parent / "_issue22_tmp.jsonl"
    try:
        path.write_text(json.dumps({"task_id": "a", "prompt": "p", "scorer_cmd": "true"}) + "\n")
        (task,) = load_tasks(str(path))
        assert task.scorer_cmd == ("true",) and task.direction == "max"
    finally:
        path.unlink()


SPEC = """[experiment]
name = "x"
profile = "sim"
[tasks]
source = "builtin:agent-opt"
[[arms]]
name = "a"
kind = "{kind}"
{extra}
"""


def test_spec_checkpoint_keys() -> None:
    arm = parse_spec(SPEC.format(kind="agent", extra='agent = "codex"\ncheckpoints = "seconds"\n'
                                 "checkpoint_start = 2.5")).arms[0]  # fmt: skip
    assert arm.agent is not None
    assert (arm.agent.checkpoints, arm.agent.checkpoint_start) == ("seconds", 2.5)
    bad = [
        ('agent = "codex"\ncheckpoints = "calls"', "unknown checkpoints 'calls'"),
        ('agent = "codex"\ncheckpoint_start = 5', "checkpoint_start but no checkpoints"),
    ]
    for extra, message in bad:
        with pytest.raises(UserError) as err:
            parse_spec(SPEC.format(kind="agent", extra=extra))
        assert message in err.value.message and ":" in err.value.message
    with pytest.raises(UserError) as err:
        parse_spec(SPEC.format(kind="single", extra='checkpoints = "tokens"'))
    assert "checkpoints is only for agent arms" in err.value.message


def test_on_a_min_task_best_of_n_keeps_the_lowest_score_and_the_lower_score_wins() -> None:
    from eloledger.judges.compare import ArmResult, score_comparisons
    from eloledger.runner.selection import select
    from eloledger.runner.spec import ArmSpec

    arm = ArmSpec(name="k", kind="best_of_n", n=3, temperature=1.0, select="verifier")
    rows = [{"status": "ok", "score": s, "content": str(s), "total_tokens": 5,
             "usage_source": "server"} for s in (4.0, 1.5, None)]  # fmt: skip
    low = Task("fit", "p", kind="agent", files={}, scorer="def score(x): return 0",
               direction="min")  # fmt: skip
    high = Task("fit", "p", kind="agent", files={}, scorer="def score(x): return 0")
    assert select(low, arm, 0, rows).score == 1.5
    assert select(high, arm, 0, rows).score == 4.0

    def result(name: str, score: float) -> ArmResult:
        return ArmResult("fit", name, 0, 0, None, score, None, 1, 1)

    pair = [result("a", 1.5), result("b", 4.0)]
    assert score_comparisons(pair, ["a", "b"], lower_wins=["fit"]) == [("fit", "a", "b", 1.0)]
    assert score_comparisons(pair, ["a", "b"]) == [("fit", "a", "b", 0.0)]
