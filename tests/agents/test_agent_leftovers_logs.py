"""A FIFO named like a session log never blocks a log reader (import, watch, an agent's HOME).

A FIFO without a writer blocks whoever opens it for reading, forever: an agent can leave one
named ``*.jsonl`` in its log folder, and a user's log folder can hold one by accident. Each
reader runs in a thread that must finish in seconds; if it does not, the test opens the FIFO
itself (which releases the blocked reader) and fails.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eloledger.agents.follow import AgentLogFollower
from eloledger.agents.importer import import_logs
from eloledger.runner.agent_crosscheck import read_log_usage

LINE = {"type": "assistant", "sessionId": "s1", "requestId": "r1",
        "message": {"id": "m1", "model": "m", "usage": {"input_tokens": 10, "output_tokens": 2}}}  # fmt: skip


def _finishes(fn: Callable[[], Any], fifos: list[Path], within: float = 10.0) -> Any:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    worker.start()
    worker.join(within)
    if worker.is_alive():
        for fifo in fifos:  # release the reader blocked in open(): a writer appears
            os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
        worker.join(within)
        pytest.fail(f"blocked on a FIFO for {within:g} s")
    return out[0]


def _claude_logs(root: Path) -> list[Path]:
    folder = root / ".claude" / "projects" / "-work"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(json.dumps(LINE) + "\n")
    fifos = [folder / "evil.jsonl", folder / "zz.jsonl"]
    for fifo in fifos:
        os.mkfifo(fifo)
    return fifos


def test_import_skips_a_fifo_named_like_a_log(tmp_path: Path) -> None:
    fifos = _claude_logs(tmp_path)
    ledger = tmp_path / "out.jsonl"
    report = _finishes(
        lambda: import_logs("claude-code", [tmp_path / ".claude"], ledger, settle_s=0), fifos
    )
    assert report.calls == 1
    (row,) = map(json.loads, ledger.open())
    assert row["total_tokens"] == 12


def test_watch_skips_a_fifo_named_like_a_log(tmp_path: Path) -> None:
    fifos = _claude_logs(tmp_path)
    follower = AgentLogFollower("claude-code", [tmp_path / ".claude"], settle_s=0)
    rows = _finishes(follower.poll, fifos)
    assert [r["total_tokens"] for r in rows] == [12]


def test_an_agent_home_with_a_fifo_log_is_read_without_it(tmp_path: Path) -> None:
    fifos = _claude_logs(tmp_path)
    logged = _finishes(lambda: read_log_usage("claude-code", tmp_path), fifos)
    assert logged is not None and logged.total.total_tokens == 12


def test_a_fifo_for_gemini_project_root_does_not_block(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    fifo = chats.parent / ".project_root"
    os.mkfifo(fifo)
    message = {"id": "g1", "type": "gemini", "model": "gm",
               "tokens": {"input": 10, "output": 2, "total": 12}}  # fmt: skip
    (chats / "session-1.jsonl").write_text(
        json.dumps({"sessionId": "s", "projectHash": "h"}) + "\n" + json.dumps(message) + "\n"
    )
    ledger = tmp_path / "out.jsonl"
    report = _finishes(
        lambda: import_logs("gemini-cli", [tmp_path / ".gemini"], ledger, settle_s=0), [fifo]
    )
    assert report.calls == 1
    (row,) = map(json.loads, ledger.open())
    assert row["project"] == "proj" and row["total_tokens"] == 12
