"""The ledger follower: partial lines, truncation, replacement, many followers, a live writer."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from eloledger.ledger import LedgerWriter
from eloledger.ledger.follow import LedgerFollower


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def test_partial_line_is_kept_until_complete(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    follower = LedgerFollower(path)
    assert follower.poll() == []  # no file yet
    append(path, b'{"arm": "a", "total_tokens": 1}\n{"arm": "b", "tot')
    rows = follower.poll()
    assert [r["arm"] for r in rows] == ["a"]
    assert follower.poll() == []
    append(path, b'al_tokens": 2}\n')
    rows = follower.poll()
    assert [(r["arm"], r["total_tokens"]) for r in rows] == [("b", 2)]
    assert follower.resets == 0 and follower.warnings == []


def test_truncation_and_replacement_restart_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    append(path, b'{"arm": "a"}\n{"arm": "b"}\n')
    follower = LedgerFollower(path)
    assert len(follower.poll()) == 2
    path.write_bytes(b'{"arm": "c"}\n')  # truncated in place (same inode), shorter
    rows = follower.poll()
    assert [r["arm"] for r in rows] == ["c"]
    assert follower.resets == 1 and follower.last_reset == "truncated"

    fresh = tmp_path / "new.jsonl"
    fresh.write_bytes(b'{"arm": "d"}\n{"arm": "e"}\n{"arm": "f"}\n')
    os.replace(fresh, path)  # replaced: a new inode at the same path
    rows = follower.poll()
    assert [r["arm"] for r in rows] == ["d", "e", "f"]
    assert follower.resets == 2 and follower.last_reset == "replaced"
    assert any("replaced" in w for w in follower.warnings)


def test_truncated_then_refilled_between_polls(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    append(path, b'{"arm": "a"}\n')
    follower = LedgerFollower(path)
    assert len(follower.poll()) == 1
    with open(path, "r+b") as fh:  # same inode, rewritten longer than before
        fh.truncate(0)
        fh.write(b'{"arm": "xxxxxxxxxxxxxxxx"}\n{"arm": "y"}\n')
    rows = follower.poll()
    assert [r["arm"] for r in rows] == ["xxxxxxxxxxxxxxxx", "y"]
    assert follower.last_reset == "rewritten"


def test_writer_cutting_a_torn_tail_is_not_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    with LedgerWriter(path) as writer:
        writer.append({"arm": "a", "total_tokens": 1})
    append(path, b'{"arm": "torn", "tot')  # a crashed writer
    follower = LedgerFollower(path)
    assert [r["arm"] for r in follower.poll()] == ["a"]
    with LedgerWriter(path) as writer:  # resumed run cuts the torn tail, then appends
        writer.append({"arm": "b", "total_tokens": 2})
    assert [r["arm"] for r in follower.poll()] == ["b"]
    assert follower.resets == 0


def test_two_followers_and_from_end(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    append(path, b'{"arm": "old"}\n{"arm": "old2"}\n{"arm": "half')
    first = LedgerFollower(path)
    tail = LedgerFollower(path, from_start=False)
    assert [r["arm"] for r in first.poll()] == ["old", "old2"]
    assert tail.poll() == []
    append(path, b'"}\n{"arm": "new"}\n')
    assert [r["arm"] for r in first.poll()] == ["half", "new"]
    assert [r["arm"] for r in tail.poll()] == ["half", "new"]


def test_bad_line_is_skipped_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    append(path, b'{"arm": "a"}\nnot json\n{"arm": "b", "total_tokens": -1}\n{"arm": "c"}\n')
    follower = LedgerFollower(path)
    assert [r["arm"] for r in follower.poll()] == ["a", "c"]
    assert len(follower.warnings) == 2
    assert f"{path}:2:" in follower.warnings[0] and f"{path}:3:" in follower.warnings[1]


def test_small_read_window_widens_for_long_lines(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    append(path, b'{"arm": "a", "content": "' + b"x" * 300 + b'"}\n{"arm": "b"}\n')
    follower = LedgerFollower(path, max_bytes=64)
    rows: list[dict] = []
    for _ in range(10):
        rows += follower.poll()
    assert [r["arm"] for r in rows] == ["a", "b"]


WRITER = """
import sys, time
from eloledger.ledger import LedgerWriter
path, n = sys.argv[1], int(sys.argv[2])
with LedgerWriter(path) as w:
    for i in range(n):
        w.append({"arm": "a" if i % 2 else "b", "task_id": f"t{i}", "total_tokens": i,
                  "content": "x" * (i * 37 % 2000)})
        if i % 50 == 0:
            time.sleep(0.005)
"""


def test_follow_a_real_writer_process(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    n = 600
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n)])
    followers = [LedgerFollower(path), LedgerFollower(path, max_bytes=4096)]
    seen: list[list[dict]] = [[], []]
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            done = proc.poll() is not None
            for rows, follower in zip(seen, followers, strict=True):
                rows.extend(follower.poll())
            if done and all(len(rows) == n for rows in seen):
                break
            time.sleep(0.002)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == 0
    for rows, follower in zip(seen, followers, strict=True):
        assert [r["total_tokens"] for r in rows] == list(range(n))
        assert follower.warnings == [] and follower.resets == 0
