"""`eloledger watch`: the Run view following a ledger that another process writes."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.cli import watch_cmd
from eloledger.errors import UserError
from eloledger.ledger import LedgerWriter
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.sources import LedgerWatch
from eloledger.tui.testing import screen_text, until

WRITER = r"""
import os, sys, time
from pathlib import Path
from eloledger.ledger import LedgerWriter

def wait(name):  # the test says when to go on: steps follow its checks, not a clock
    while not Path(name).exists():
        time.sleep(0.01)

path, rows = sys.argv[1], int(sys.argv[2])
signals = Path(path).parent
with LedgerWriter(path) as w:
    for i in range(rows - 1):
        if i == rows // 2:
            wait(signals / "go-on")
        w.append({"task_id": f"t{i:03d}", "arm": ["best_of_1", "best_of_4", "sc_5"][i % 3],
                  "sample": i % 4, "role": "sample", "status": "ok", "prompt_tokens": 50,
                  "completion_tokens": 50, "total_tokens": 100, "usage_source": "server",
                  "latency_ms": 200.0})
# the last row arrives torn: half now, the rest later (a writer mid-write)
line = b'{"task_id": "last", "arm": "best_of_1", "status": "ok", "total_tokens": 100, ' \
       b'"prompt_tokens": 50, "completion_tokens": 50}\n'
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
os.write(fd, line[:30])
(signals / "torn").touch()
wait(signals / "finish")
os.write(fd, line[30:]); os.close(fd)
"""


async def test_watch_follows_a_writer_process_with_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rows = 60
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(rows)])
    app = EloLedgerApp(watch=path)
    second = None
    try:
        async with app.run_test(size=(80, 24)):
            # attach a second, independent viewer of the same file
            second = LedgerWatch(path)
            second_task = asyncio.create_task(second.run())
            counters = lambda: app.live_source.counters.total_tokens  # noqa: E731
            # the writer stops half way until told to go on: the viewer shows exactly that half
            # (the first wait includes the writer process starting: a minute bounds a hang)
            assert await until(lambda: counters() == rows // 2 * 100, 60)
            (tmp_path / "go-on").touch()
            assert await until(lambda: counters() == (rows - 1) * 100)
            assert await until((tmp_path / "torn").exists)
            assert not path.read_bytes().endswith(b"\n")
            # the file now ends mid-line: let the viewer read it several times (counted polls,
            # not seconds), and it still shows only the complete rows
            follower = app.live_source.follower
            polls = 0
            poll = follower.poll

            def counted() -> list:
                nonlocal polls
                polls += 1
                return poll()

            follower.poll = counted
            assert await until(lambda: polls >= 3)
            assert counters() == (rows - 1) * 100
            assert follower.offset == path.read_bytes().rindex(b"\n") + 1
            (tmp_path / "finish").touch()
            assert await until(lambda: counters() == rows * 100)
            assert await until(lambda: "total 6,000" in screen_text(app))  # the next refresh
            text = screen_text(app)
            assert "● following" in text
            for arm in ("best_of_1", "best_of_4", "sc_5"):
                assert arm in text
            assert await until(lambda: second.counters.total_tokens == rows * 100)
            assert second.follower is not app.live_source.follower
            second.stop()
            await second_task
    finally:
        for name in ("go-on", "finish"):  # never leave the writer waiting
            (tmp_path / name).touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0


def _append(path: Path, rows: int, arm: str, tokens: int = 100) -> None:
    with LedgerWriter(path) as w:
        for i in range(rows):
            w.append(
                {
                    "task_id": f"t{i}",
                    "arm": arm,
                    "status": "ok",
                    "total_tokens": tokens,
                    "prompt_tokens": tokens // 2,
                    "completion_tokens": tokens - tokens // 2,
                }
            )


async def test_watch_starts_over_when_the_file_is_truncated_or_replaced(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _append(path, 10, "old_arm")
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: app.live_source.counters.total_tokens == 1000)
        replacement = tmp_path / "new.jsonl"
        _append(replacement, 3, "new_arm", tokens=10)
        os.replace(replacement, path)  # a new run replaced the file
        assert await until(lambda: app.live_source.counters.total_tokens == 30)
        assert "old_arm" not in app.live_source.counters.arms
        path.write_bytes(b"")  # truncated
        _append(path, 2, "third_arm", tokens=7)
        assert await until(lambda: app.live_source.counters.total_tokens == 14)
        assert await until(lambda: {"third_arm", "restarted"} <= set(screen_text(app).split()))


async def test_watch_from_end_shows_only_new_rows(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _append(path, 10, "before")
    app = EloLedgerApp(watch=path, from_start=False)
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: app.live_source.polls >= 1)  # it has read the file once
        assert app.live_source.counters.total_tokens == 0
        _append(path, 4, "after", tokens=25)
        assert await until(lambda: app.live_source.counters.total_tokens == 100)
        assert set(app.live_source.counters.arms) == {"after"}


async def test_watch_pause_stops_reading_and_resume_catches_up(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _append(path, 2, "a")
    app = EloLedgerApp(watch=path)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await until(lambda: app.live_source.counters.total_tokens == 200)
        # focus lands on the Run view after the first refresh
        assert await until(lambda: app.run_view.has_focus_within)
        await pilot.press("p")
        assert app.live_source.paused
        _append(path, 3, "a")
        # an absence takes a duration: over two polls' time (0.25 s each), nothing is read
        await asyncio.sleep(0.6)
        assert app.live_source.counters.total_tokens == 200
        await pilot.press("p")
        assert await until(lambda: app.live_source.counters.total_tokens == 500)


def test_watch_command_rejects_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a folder"):
        watch_cmd.handle(argparse.Namespace(ledger=str(tmp_path), from_start=True, theme=None))
    with pytest.raises(UserError, match="no such file or folder"):
        watch_cmd.handle(
            argparse.Namespace(
                ledger=str(tmp_path / "nope" / "x.jsonl"), from_start=True, theme=None
            )
        )


def test_watch_parser_has_help_with_examples() -> None:
    parser = argparse.ArgumentParser(prog="eloledger")
    sub = parser.add_subparsers()
    watch_cmd.register(sub)
    args = parser.parse_args(["watch", "x.jsonl", "--from-end"])
    assert args.ledger == "x.jsonl" and args.from_start is False
    assert "examples:" in sub.choices["watch"].format_help()


def test_watch_shows_the_runs_span_from_row_timestamps(tmp_path: Path) -> None:
    """A viewer that attaches late shows how long the run has been going, not its own uptime."""
    from eloledger.ledger import LedgerWriter
    from eloledger.tui.run_view import RunView
    from eloledger.tui.sources import LedgerWatch

    path = tmp_path / "run.jsonl"
    with LedgerWriter(path) as writer:
        for k, ts in enumerate((1_000.0, 1_030.0, 1_095.0)):
            writer.append(
                {
                    "task_id": "t",
                    "arm": "a",
                    "sample": k,
                    "status": "ok",
                    "ts": ts,
                    "prompt_tokens": 1,
                    "completion_tokens": 2,
                    "total_tokens": 3,
                }
            )
    source = LedgerWatch(path)
    for row in source.follower.poll():
        source.counters.apply_row(row)
    assert source.counters.first_ts == 1_000.0 and source.counters.last_ts == 1_095.0
    text = RunView(source).summary_text(source)
    assert "01:35" in text.splitlines()[0]
