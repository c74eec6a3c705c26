"""Kill a run of real Claude Code sessions mid-run, resume it: no session counted twice.

The stand-in CLI of tests/agents/test_agent_run.py shows the mechanism; this runs the real Claude Code
against the embedded simulator inside `unshare -n`, SIGKILLs `eloledger run` (and so its CLIs)
while sessions are running, then `--resume`s: every session has exactly one final row, the
sessions finished before the kill are not run again, and `eloledger tokens` counts nothing twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import agent_gateway as gw  # noqa: E402

pytestmark = pytest.mark.e2e

SPEC = """[experiment]
name = "resume-e2e"
profile = "sim"
model = "sim-small"
ledger = "agents.ledger.jsonl"
concurrency = 2

[tasks]
source = "builtin:agent-code"
limit = 2

[judge]
kind = "tests"

[[arms]]
name = "claude"
kind = "agent"
agent = "claude-code"
n = 3
max_turns = 8
timeout_s = 180
"""
SESSIONS = 2 * 3  # tasks x n


def _in_namespace(*args: str) -> list[str]:
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "_", *args]


def _rows(path: Path) -> list[dict]:
    """Session rows (the meter's per-call rows, in their session's sum, left out)."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in rows if r.get("role") != "call"]


def _key(row: dict) -> tuple:
    return (row["task_id"], row["arm"], row["session"], row["sample"])


def _final(rows: list[dict]) -> list[dict]:
    return [r for r in rows if not r.get("will_retry")]


def test_killed_real_sessions_resume_without_rerun_or_double_count(tmp_path: Path) -> None:
    if reason := gw.missing_reason("claude-code"):
        pytest.skip(reason)
    (tmp_path / "spec.toml").write_text(SPEC)
    ledger = tmp_path / "agents.ledger.jsonl"
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "ELOLEDGER_CLIENTS_DIR": str(gw.CLIENTS_PREFIX),
    }
    run = [sys.executable, "-m", "eloledger", "run", "spec.toml", "--headless", "--quiet"]
    first = subprocess.Popen(
        _in_namespace(*run, "--bootstrap", "0"),
        cwd=tmp_path,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # kill once some sessions are done and others running
        if ledger.exists() and len(_final(_rows(ledger))) >= 2:
            break
        assert first.poll() is None, first.stderr.read().decode()[-2000:]
        time.sleep(0.2)
    else:
        pytest.fail("no session finished within 240 s")
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    before = _final(_rows(ledger))
    assert 2 <= len(before) < SESSIONS, "the kill must land mid-run"

    done = subprocess.run(
        _in_namespace(*run, "--resume", "--bootstrap", "0"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _rows(ledger)
    finals = _final(rows)
    keys = [_key(r) for r in finals]
    assert len(keys) == len(set(keys)) == SESSIONS  # every session once, none twice
    assert finals[: len(before)] == before  # finished sessions kept, never run again
    assert all(r["usage_source"] == "server" and r["total_tokens"] > 0 for r in finals)
    interrupted = [r for r in rows if r.get("error_class") == "interrupted"]
    assert interrupted and all(r.get("will_retry") for r in interrupted)  # cut, then re-run
    assert {_key(r) for r in interrupted} <= set(keys) - {_key(r) for r in before}

    tokens = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tokens.returncode == 0, tokens.stderr
    (group,) = json.loads(tokens.stdout)["groups"]
    assert "duplicate" not in tokens.stderr
    ok_tokens = sum(r["total_tokens"] for r in rows if r["status"] == "ok")
    assert group["total_tokens"] == ok_tokens  # each finished session's metered sum, once
