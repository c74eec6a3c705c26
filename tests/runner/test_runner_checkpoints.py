"""Checkpoints inside agent sessions, through the real runner.

A stand-in ``claude`` (Claude Code's stream-json shapes, facts/agent-samples) makes one
tool-less model call and then five more, each through the run's meter to the simulator with a
longer prompt than the last, each logged to its session log with the usage it got back and
followed by a tool step that writes a better answer (10 x the call's number) to answer.txt; its
log leaves the tool-less call out (as the real CLI's). It runs in the OS sandbox like a real
CLI, and the task's scorer judges each snapshot there too. Checked: the 1.5x grid, the budgets
(the meter's count when the snapshot was taken, never past the session's), snapshots
hard-linking the unchanged file, copies made off the event loop, the final checkpoint = the
session's verdict, no token fields on checkpoint rows and the session row as without
checkpoints.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest
from row_contract import assert_reads_back_as_written

from agent_standin import MODEL_CALL, canonical
from eloledger.ledger.schema import undocumented
from eloledger.runner import checkpoints
from eloledger.runner.run import run_experiment
from eloledger.runner.spec import load_spec

FAKE = r"""#!/usr/bin/env python3
import json, os, pathlib, sys, time
if "--help" in sys.argv:
    print("-p --output-format --verbose --model --effort --permission-mode --allowedTools")
    sys.exit(0)
model = sys.argv[sys.argv.index("--model") + 1]
""" + MODEL_CALL + r"""
log = pathlib.Path(os.environ["HOME"], ".claude", "projects", "-work", "sid.jsonl")
log.parent.mkdir(parents=True, exist_ok=True)
def emit(event):
    print(json.dumps(event), flush=True)
emit({"type": "system", "subtype": "init", "session_id": "sid", "model": model})
answers = [model_call("hi")]  # the tool-less first call, which no session log records
for k in range(1, 6):
    usage = model_call("word " * (200 * k * k))  # each call's prompt well past the last
    answers.append(usage)
    with log.open("a") as fh:
        fh.write(json.dumps({"type": "assistant", "sessionId": "sid", "requestId": f"r{k}",
            "timestamp": f"2026-12-01T00:00:0{k}Z", "cwd": os.getcwd(), "message": {"id": f"m{k}",
            "model": model, "usage": usage}}) + "\n")
    emit({"type": "assistant", "message": {"id": f"m{k}", "content": [{"type": "tool_use",
          "id": f"t{k}", "name": "Bash", "input": {"command": "echo"}}],
          "usage": dict(usage, output_tokens=1)}})
    time.sleep(0.2)  # the tool runs
    pathlib.Path("answer.txt").write_text(str(10 * k))
    emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": f"t{k}",
          "content": "ok"}]}})
    time.sleep(0.3)  # the next model call
total = {"inputTokens": sum(a["input_tokens"] for a in answers),
         "outputTokens": sum(a["output_tokens"] for a in answers)}
pathlib.Path("answers.json").write_text(json.dumps(answers))
emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 5, "result": "done",
      "session_id": "sid", "modelUsage": {model: total}})
"""
SCORER = "def score(work):\n    return float(open(work + '/answer.txt').read() or 0)\n"


def _cum(session: dict) -> list[int]:
    """The meter's count after each of the five logged calls (the tool-less one included),
    from the answers the stand-in received."""
    answers = json.loads(Path(session["evidence"], "work", "answers.json").read_text())
    totals = [sum(canonical(a)) for a in answers]
    return [sum(totals[: k + 1]) for k in range(1, 6)]


@pytest.fixture
def clients(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "clients" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "claude"
    script.write_text(FAKE)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    for folder in (tmp_path, tmp_path / "clients", tmp_path / "clients" / "node_modules", bin_dir):
        folder.chmod(0o755)  # the sandbox's own uid runs it
    monkeypatch.setenv("ELOLEDGER_CLIENTS_DIR", str(tmp_path / "clients"))
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    from eloledger.runner import agent_clis

    agent_clis.known_flags.cache_clear()
    return bin_dir


def _spec(tmp_path: Path, arm_extra: str) -> Path:
    task = {"task_id": "opt", "kind": "agent", "prompt": "Improve answer.txt.",
            "files": {"answer.txt": "0", "data.bin": "x" * 200_000}, "scorer": SCORER}  # fmt: skip
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    path = tmp_path / "spec.toml"
    path.write_text(f"""[experiment]
name = "ckpt"
profile = "sim"
ledger = "ckpt.ledger.jsonl"

[sim]
speed = 100

[tasks]
source = "tasks.jsonl"

[[arms]]
name = "agent"
kind = "agent"
agent = "claude-code"
model = "m"
timeout_s = 120
{arm_extra}
""")
    return path


def _rows(path: Path) -> list[dict]:
    """Session and checkpoint rows (the meter's per-call rows left out)."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in rows if r["role"] != "call"]


def test_token_checkpoints_follow_the_grid_with_exact_budgets_and_judged_snapshots(
    tmp_path: Path, clients: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied_in: list[str] = []
    real_copy = checkpoints.copy_tree

    def spy(src, dst, *a, **k):  # noqa: ANN001, ANN002, ANN003
        copied_in.append(threading.current_thread().name)
        return real_copy(src, dst, *a, **k)

    monkeypatch.setattr(checkpoints, "copy_tree", spy)
    spec = load_spec(_spec(tmp_path, 'checkpoints = "tokens"'))
    asyncio.run(run_experiment(spec))
    rows = _rows(spec.ledger)
    (session,) = [r for r in rows if r["role"] == "sample"]
    marks = [r for r in rows if r["role"] == "checkpoint"]
    cum = _cum(session)
    assert session["status"] == "ok" and session["total_tokens"] == cum[-1]
    assert session["score"] == 50.0 and session["passed"] is None and session["direction"] == "max"
    # the grid from the first count seen (after call 1), x1.5 a step: the prompts grow faster,
    # so it is crossed at calls 1, 2, 3, 4, 5; the fifth's budget is the session's: it is
    # the final checkpoint
    budgets = [r["budget_tokens"] for r in marks]
    assert budgets == cum
    for r, paid in zip(marks[:-1], range(1, 5), strict=True):
        assert r["score"] <= 10 * paid  # the work in a snapshot never outruns its budget
        assert r["budget_turns"] <= paid + 1
    assert [r["score"] for r in marks][-1] == session["score"]
    assert marks[-1]["final"] and not any(r["final"] for r in marks[:-1])
    assert all(r["sandbox"] == "bwrap" and r["direction"] == "max" for r in marks)
    assert all("total_tokens" not in r and "prompt_tokens" not in r for r in marks)
    scores = [r["score"] for r in marks]
    assert scores == sorted(scores) and scores[0] < scores[-1]
    # snapshots: the unchanged 200 KB file is one inode across them, answer.txt a copy each
    snaps = [spec.ledger.parent / r["snapshot"] for r in marks[:-1]]
    inodes = {os.stat(s / "data.bin").st_ino for s in snaps}
    assert len(inodes) == 1
    assert len({os.stat(s / "answer.txt").st_ino for s in snaps}) == len(snaps)
    assert copied_in and "MainThread" not in copied_in  # never on the event loop's thread
    # session, call and checkpoint rows carry only fields the ledger reference describes
    every = [json.loads(x) for x in spec.ledger.read_text().splitlines() if x.strip()]
    assert {r["role"] for r in every} == {"sample", "call", "checkpoint"}
    assert not undocumented(every)
    assert_reads_back_as_written(spec.ledger)  # of the types LedgerRow declares, read as written


def test_turn_checkpoints_and_the_session_row_is_the_same_as_without(
    tmp_path: Path, clients: Path
) -> None:
    plain = load_spec(_spec(tmp_path, ""))
    asyncio.run(run_experiment(plain))
    (before,) = _rows(plain.ledger)
    cum = _cum(before)
    plain.ledger.unlink()
    shutil.rmtree(plain.ledger.parent / "ckpt.agents", ignore_errors=True)
    spec = load_spec(_spec(tmp_path, 'checkpoints = "turns"\ncheckpoint_start = 2'))
    asyncio.run(run_experiment(spec))
    rows = _rows(spec.ledger)
    after = rows[0]
    volatile = {"ts", "latency_ms", "run_id", "base_url"}  # the sim listens on a new port
    assert {k: v for k, v in before.items() if k not in volatile} == {
        k: v for k, v in after.items() if k not in volatile
    }
    marks = [r for r in rows if r["role"] == "checkpoint"]
    # turns grid 2, 3, 4.5 -> snapshots after turns 2, 3 and 5 (5 = the end: the final one)
    assert [r["budget_turns"] for r in marks[:-1]] == [2, 3]
    assert [r["budget_tokens"] for r in marks] == [cum[1], cum[2], cum[4]]
    assert [r["score"] for r in marks] == [20.0, 30.0, 50.0]


def test_seconds_checkpoints_are_taken_between_events_on_their_grid(
    tmp_path: Path, clients: Path
) -> None:
    spec = load_spec(_spec(tmp_path, 'checkpoints = "seconds"\ncheckpoint_start = 0.6'))
    asyncio.run(run_experiment(spec))
    rows = _rows(spec.ledger)
    (session,) = [r for r in rows if r["role"] == "sample"]
    marks = [r for r in rows if r["role"] == "checkpoint"]
    # the session runs about 2.5 s (five 0.5 s calls): steps 0.6, 0.9, 1.35, 2.03, ...
    assert len(marks) >= 3, [r["budget_seconds"] for r in marks]  # (equal-token ones merge)
    seconds = [r["budget_seconds"] for r in marks[:-1]]
    steps = [0.6 * 1.5**i for i in range(len(seconds))]
    assert all(s >= step for s, step in zip(seconds, steps, strict=True)), (seconds, steps)
    assert seconds == sorted(seconds)
    tokens = [r["budget_tokens"] for r in marks]
    cum = _cum(session)
    assert tokens == sorted(set(tokens)) and tokens[-1] == session["total_tokens"] == cum[-1]
    assert all(t in cum for t in tokens[:-1])  # each at a metered call boundary, exactly
    assert marks[-1]["score"] == session["score"] == 50.0
