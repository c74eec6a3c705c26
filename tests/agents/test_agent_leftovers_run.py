"""Nothing an agent leaves behind can hang or crash the run, or smuggle a host file in.

Through the real runner (``eloledger run`` in a subprocess), with a stand-in ``claude`` that
speaks Claude Code's stream-json in the OS sandbox and, by its model name, leaves:

* ``fifo``: a FIFO named ``*.jsonl`` in its HOME's log folder (opened, it blocks forever);
* ``deep``: a 1200-deep folder chain in its work folder and its HOME (walked by recursion, a
  RecursionError);
* ``wide``: 20,000 empty folders in its work folder (copied and judged, minutes);
* ``linked``: its ``~/.claude/projects`` replaced by a symlink to another user's log folder;
* ``fixer``: nothing odd; it fixes the task's file and must pass.

Every session gets its row; the ones that trip a copy cap fail alone with a note naming it;
the other user's session log reaches no file eloledger writes; the temporary folders are
gone. Then ``--resume`` over a killed session whose HOME holds the FIFO finishes too.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_standin import SRC, install
from eloledger.tasks import load_tasks
from sandbox_support import need_sandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux sandbox")

CANARY = "sk-canary-leftover-" + "a1" * 12
STAND_IN = r"""
logs = log.parent
def chain(top, depth):
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)
with open(log, "a") as fh:
    fh.write(json.dumps({"type": "assistant", "sessionId": "sid", "requestId": "r1",
        "message": {"id": "m1", "model": model, "usage": {"input_tokens": 10,
        "output_tokens": 2}}}) + "\n")
if model == "fifo":
    os.mkfifo(logs / "evil.jsonl")
    os.mkfifo("answer.jsonl")
if model == "deep":
    chain(".", 1200)
    chain(str(home), 1200)
if model == "wide":
    for i in range(20000):
        os.mkdir(f"e{i}")
if model == "linked":
    os.rename(home / ".claude" / "projects", home / ".claude" / "mine")
    os.symlink(plan["victim"], home / ".claude" / "projects")
if model == "fixer":
    for name, text in plan["solutions"].items():
        if os.path.exists(name):
            pathlib.Path(name).write_text(text)
emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
      "result": "done", "session_id": "sid",
      "modelUsage": {model: {"inputTokens": 10, "outputTokens": 2}}})
"""
ARMS = ("fifo", "deep", "wide", "linked", "fixer")


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim" / ".claude" / "projects"
    (victim / "-home-victim").mkdir(parents=True)
    (victim / "-home-victim" / "v.jsonl").write_text(
        json.dumps({"type": "assistant", "sessionId": CANARY, "requestId": "rv",
                    "cwd": "/home/" + CANARY, "message": {"id": "mv", "model": CANARY,
                    "usage": {"input_tokens": 777, "output_tokens": 7}}}) + "\n"
    )  # fmt: skip
    solutions: dict[str, str] = {}
    for task in load_tasks("builtin:agent-code"):
        solutions.update(task.solution_files or {})
    install(tmp_path, STAND_IN, {"victim": str(victim), "solutions": solutions}, monkeypatch)


def _spec(tmp_path: Path, arms: tuple[str, ...]) -> Path:
    text = ""
    for name in arms:
        text += f'[[arms]]\nname = "{name}"\nkind = "agent"\nagent = "claude-code"\n'
        text += f'model = "{name}"\ntimeout_s = 120\n'
    path = tmp_path / "spec.toml"
    path.write_text(
        '[experiment]\nname = "leftovers"\nprofile = "sim"\nledger = "left.ledger.jsonl"\n'
        f'concurrency = 2\n[tasks]\nsource = "builtin:agent-code"\nlimit = 1\n\n{text}'
    )
    return path


def _run(tmp_path: Path, *extra: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``eloledger run`` in its own process group (killed whole if it hangs: a failure)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(SRC)}
    argv = [sys.executable, "-m", "eloledger", "run", str(tmp_path / "spec.toml"), "--headless",
            "--quiet", "--bootstrap", "0", *extra]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, text=True, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"eloledger run {' '.join(extra)} hung for {timeout:g} s")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _no_canary(tmp_path: Path) -> None:
    for path in tmp_path.rglob("*"):
        if path.is_relative_to(tmp_path / "victim") or path.is_relative_to(tmp_path / "clients"):
            continue
        if path.is_file() and not path.is_symlink():
            assert CANARY.encode() not in path.read_bytes(), path


@pytest.fixture
def bwrap() -> None:
    need_sandbox()


# (about 20-60 s on two shared cores: the agent's 20,000 folders are made and removed for real,
# and five sandboxed sessions run; one run for all five keeps it to one runner start-up)
def test_what_agents_leave_costs_their_own_session_only(
    tmp_path: Path, temp_home: Path, bwrap: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch)
    _spec(tmp_path, ARMS)
    started = time.monotonic()
    done = _run(tmp_path)
    elapsed = time.monotonic() - started
    # the run ends normally; its status names the two arms whose sessions tripped a cap
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    for arm in ("deep", "wide"):
        assert f"arm {arm}: no successful call (1 of 1 failed: 1 copy_limit)" in done.stderr
    rows = {r["arm"]: r for r in map(json.loads, (tmp_path / "left.ledger.jsonl").open())}
    assert sorted(rows) == sorted(ARMS)
    assert rows["fixer"]["status"] == "ok" and rows["fixer"]["passed"] is True
    for arm, words in (("deep", "deep"), ("wide", "folders")):
        row = rows[arm]
        assert row["status"] == "error" and row["error_class"] == "copy_limit", row
        assert words in row["error"] and "not judged" in row["error"], row["error"]
        assert row.get("score") is None and not Path(row["evidence"], "work").exists()
    # a session's cost, folders included (before the copy cap: minutes to copy and judge)
    assert rows["wide"]["latency_ms"] < 90_000, rows["wide"]["latency_ms"]
    # the FIFOs were left out, never opened: the session is judged like any other
    assert rows["fifo"]["status"] == "ok" and rows["fifo"]["passed"] is False
    fifo_home = Path(rows["fifo"]["evidence"], "home")
    kept = {p.name for p in fifo_home.rglob("*")}
    assert "sid.jsonl" in kept and "evil.jsonl" not in kept
    # the symlinked log folder was not followed: the victim's log is nowhere (its tokens are
    # the meter's; the CLI's report, which no call backs, is only a cross-check)
    assert rows["linked"]["status"] == "ok" and rows["linked"]["usage_check"] != "agree"
    _no_canary(tmp_path)
    for row in rows.values():  # eloledger's copies: no link, private modes
        for path in Path(row["evidence"]).rglob("*"):
            info = path.lstat()
            assert not stat.S_ISLNK(info.st_mode), path
            if path.parent.name != Path(row["evidence"]).name:  # below the evidence files
                assert stat.S_IMODE(info.st_mode) in (0o600, 0o700), (path, oct(info.st_mode))
    assert list((tmp_path / "tmp").iterdir()) == []  # every temporary folder removed
    assert elapsed < 180, elapsed


def test_resume_over_a_killed_session_whose_home_holds_a_fifo(
    tmp_path: Path, temp_home: Path, bwrap: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch)
    _spec(tmp_path, ("fixer",))
    assert _run(tmp_path).returncode == 0
    ledger = tmp_path / "left.ledger.jsonl"
    (row,) = map(json.loads, ledger.open())
    # as if eloledger had been killed during that session: its evidence, no row
    ledger.unlink()
    logs = Path(row["evidence"], "home", ".claude", "projects", "-work")
    logs.mkdir(parents=True, exist_ok=True)
    os.mkfifo(logs / "evil.jsonl")
    done = _run(tmp_path, "--resume", timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(x) for x in ledger.open()]
    assert [(r["status"], r.get("error_class")) for r in rows] == [
        ("error", "interrupted"),
        ("ok", None),
    ]
    assert rows[0]["usage_source"] == "log" and rows[0]["total_tokens"] == 12
