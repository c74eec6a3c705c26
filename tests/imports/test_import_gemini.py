"""Gemini CLI chat logs: ids written twice (last write wins), $set restatements, projects."""

from __future__ import annotations

import copy
from pathlib import Path

from import_support import SAMPLES, lines_of, run, write_lines


def _chat(root: Path, lines: list[dict], name: str = "session-1.jsonl") -> Path:
    return write_lines(root / "tmp" / "gwork" / "chats" / name, lines)


def test_double_written_ids_count_once(tmp_path: Path) -> None:
    _chat(tmp_path, lines_of(SAMPLES / "gemini-chat-session.jsonl"))
    report, rows = run("gemini-cli", tmp_path, tmp_path / "l.jsonl")
    assert [r["total_tokens"] for r in rows] == [1011, 2022]
    assert report.repeats == 1
    row = rows[0]
    # input already includes cached; output excludes thoughts (so they are added)
    assert row["prompt_tokens"] == 1000 and row["cached_tokens"] == 100
    assert row["completion_tokens"] == 11 and row["reasoning_tokens"] == 1
    assert row["session"] == "0db8ba2a-20a7-46b2-83b7-657a47d4eb0b"
    assert row["model"] == "gemini-2.5-flash" and row["project"] == "gwork"
    assert row["source"] == "gemini-cli"


def test_the_last_write_of_an_id_wins(tmp_path: Path) -> None:
    lines = lines_of(SAMPLES / "gemini-chat-session.jsonl")
    writes = [d for d in lines if d.get("id") == "5e43c106-3651-422d-b049-f98de82a4437"]
    writes[-1]["tokens"] = {"input": 1000, "output": 15, "cached": 100, "thoughts": 1, "total": 0}
    _chat(tmp_path, lines)
    _, rows = run("gemini-cli", tmp_path, tmp_path / "l.jsonl")
    assert rows[0]["completion_tokens"] == 16


def test_set_restating_messages_and_resumed_sessions_add_nothing(tmp_path: Path) -> None:
    lines = lines_of(SAMPLES / "gemini-chat-session.jsonl")
    messages = [d for d in lines if d.get("type") in ("user", "gemini")]
    restated = {"$set": {"messages": messages}}
    _chat(tmp_path, [*lines, restated])
    resumed = copy.deepcopy(lines)
    resumed[0]["sessionId"] = "resumed"
    _chat(tmp_path, resumed, "session-2.jsonl")
    report, rows = run("gemini-cli", tmp_path, tmp_path / "l.jsonl")
    assert [r["total_tokens"] for r in rows] == [1011, 2022]
    assert report.duplicates == 3  # the resumed file's three gemini lines


def test_project_root_file_names_the_working_directory(tmp_path: Path) -> None:
    _chat(tmp_path, lines_of(SAMPLES / "gemini-chat-session.jsonl"))
    (tmp_path / "tmp/gwork/.project_root").write_text("/home/user/work\n")
    _, rows = run("gemini-cli", tmp_path, tmp_path / "l.jsonl")
    assert rows[0]["project"] == "/home/user/work"
