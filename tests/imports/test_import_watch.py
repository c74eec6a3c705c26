"""`watch --claude-code|--codex|--gemini`: the Run view follows live session logs (Pilot)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eloledger.cli import main
from eloledger.tui.log_watch import AgentLogWatch, LogWatchApp
from eloledger.tui.testing import screen_text, until
from import_support import SAMPLES

# A Claude Code session written the way Claude Code writes it: line by line over time, the
# last message's second block arriving later, then a second session file appearing.
WRITER = r"""
import sys, time
from pathlib import Path
sample, root = Path(sys.argv[1]), Path(sys.argv[2])
lines = sample.read_text().splitlines(keepends=True)
project = root / "projects" / "-home-user-work"
project.mkdir(parents=True, exist_ok=True)
first = project / "s1.jsonl"
cut = next(i for i, l in enumerate(lines) if '"msg_mock_3"' in l)
with open(first, "a") as fh:
    for line in lines[:cut]:
        fh.write(line); fh.flush(); time.sleep(0.05)
go = Path(sys.argv[3])
def wait(name):
    while not (go / name).exists():
        time.sleep(0.02)
wait("1")
with open(first, "a") as fh:
    fh.writelines(lines[cut:])
wait("2")
second = lines[cut].replace("8d00beab", "5e55102d").replace("msg_mock_3", "msg_other")
(project / "s2.jsonl").write_text(second)
"""


async def test_spend_grows_while_the_session_log_grows(tmp_path: Path) -> None:
    root = tmp_path / ".claude"
    source = AgentLogWatch("claude-code", [root], interval=0.1, settle_s=0.3)
    app = LogWatchApp(source)
    sample = SAMPLES / "claude-project-session.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(sample), str(root), str(tmp_path)])
    try:
        async with app.run_test(size=(200, 40)):
            counters = source.counters
            # msg_mock_2 only (the first wait includes the writer process starting)
            assert await until(lambda: counters.total_tokens == 2234, 60)
            assert await until(lambda: "total 2,234" in screen_text(app)), screen_text(app)
            (tmp_path / "1").touch()  # the session goes on: its next call
            assert await until(lambda: counters.total_tokens == 2234 + 3336)
            assert await until(lambda: "total 5,570" in screen_text(app)), screen_text(app)
            (tmp_path / "2").touch()  # another session starts
            assert await until(lambda: counters.total_tokens == 2234 + 3336 * 2)
            # the second session's line in the arm list, drawn with the rest of that refresh
            assert await until(lambda: "5e55102d claude-son" in screen_text(app)), screen_text(app)
            text = screen_text(app)
            assert "● following" in text and "Claude Code logs" in text
            assert "8d00beab claude-son" in text and "5e55102d claude-son" in text
            arms = counters.arms
            assert arms["8d00beab claude-sonnet-4-5-20250929"].total_tokens == 2234 + 3336
            assert arms["5e55102d claude-sonnet-4-5-20250929"].total_tokens == 3336
            assert source.calls_seen == 3
    finally:
        writer.wait(timeout=20)
    assert writer.returncode == 0


async def test_from_end_shows_only_calls_logged_after_the_watch_began(tmp_path: Path) -> None:
    project = tmp_path / ".codex" / "sessions"
    project.mkdir(parents=True)
    (project / "rollout-old.jsonl").write_bytes((SAMPLES / "codex-rollout.jsonl").read_bytes())
    source = AgentLogWatch("codex", [tmp_path / ".codex"], from_start=False, interval=0.1)
    app = LogWatchApp(source)
    async with app.run_test(size=(100, 30)):
        assert await until(lambda: len(source.follower.scanner.files) == 1)
        assert source.counters.total_tokens == 0
        text = (SAMPLES / "codex-rollout.jsonl").read_text().replace("01a22efe", "0bbbbbbb")
        (project / "rollout-new.jsonl").write_text(text)
        assert await until(lambda: source.counters.total_tokens == 4040)


def test_watch_logs_and_ledger_together_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["watch", str(tmp_path / "x.jsonl"), "--codex"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["watch"]) == 2
    assert "watch needs a LEDGER" in capsys.readouterr().err
