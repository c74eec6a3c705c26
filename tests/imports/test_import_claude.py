"""Claude Code logs: dedupe rules, each on the shapes Claude Code 2.1 wrote (agent-samples)."""

from __future__ import annotations

import copy
import os
from pathlib import Path

from import_support import lines_of, place, run, totals_by_session, write_lines

SAMPLE = "claude-project-session.jsonl"
SESSION = "8d00beab-b05d-45b3-a0b7-ffcaa48c3b80"


def _projects(tmp_path: Path) -> Path:
    root = tmp_path / ".claude"
    place(SAMPLE, root / "projects" / "-home-user-work" / f"{SESSION}.jsonl")
    return root


def test_one_row_per_message_not_per_content_block(tmp_path: Path) -> None:
    report, rows = run("claude-code", _projects(tmp_path), tmp_path / "l.jsonl")
    assert [r["call_id"] for r in rows] == ["msg_mock_2", "msg_mock_3"]
    assert report.repeats == 1  # msg_mock_2 has a text block and a tool_use block
    first = rows[0]
    # input 12 + cache read 2000 + cache write 200: the canonical prompt includes the cache
    assert first["prompt_tokens"] == 2212
    assert first["cached_tokens"] == 2000 and first["cache_write_tokens"] == 200
    assert first["completion_tokens"] == 22 and first["total_tokens"] == 2234
    assert first["session"] == SESSION and first["project"] == "/home/user/work"
    assert first["model"] == "claude-sonnet-4-5-20250929"
    assert first["usage_source"] == "log" and first["source"] == "claude-code"
    assert first["ts"] == 1796084705.617


def test_repeated_block_lines_keep_the_largest_usage(tmp_path: Path) -> None:
    lines = lines_of(Path(__file__).parent.parent / "data/agent-logs/samples" / SAMPLE)
    blocks = [i for i, d in enumerate(lines) if d.get("message", {}).get("id") == "msg_mock_2"]
    lines[blocks[0]]["message"]["usage"]["output_tokens"] = 1  # the streaming, non-final usage
    write_lines(tmp_path / "p" / "s.jsonl", lines)
    _, rows = run("claude-code", tmp_path / "p", tmp_path / "l.jsonl")
    assert rows[0]["completion_tokens"] == 22


def test_resumed_session_copies_are_not_counted_again(tmp_path: Path) -> None:
    root = _projects(tmp_path)
    original = lines_of(root / "projects/-home-user-work" / f"{SESSION}.jsonl")
    resumed = copy.deepcopy(original)
    for line in resumed:
        if "sessionId" in line:
            line["sessionId"] = "resumed-0001"
    new_call = copy.deepcopy([d for d in original if d.get("type") == "assistant"][-1])
    new_call["message"]["id"], new_call["requestId"] = "msg_new", "req_new"
    new_call["sessionId"] = "resumed-0001"
    # named to sort before the original: the older file (by mtime) is still read first
    os.utime(root / "projects/-home-user-work" / f"{SESSION}.jsonl", (1000, 1000))
    write_lines(root / "projects/-home-user-work/00-resumed.jsonl", [*resumed, new_call])
    _, rows = run("claude-code", root, tmp_path / "l.jsonl")
    assert sorted(r["call_id"] for r in rows) == ["msg_mock_2", "msg_mock_3", "msg_new"]
    by_session = totals_by_session(rows)
    assert by_session["resumed-0001"]["calls"] == 1 and by_session[SESSION]["calls"] == 2


def test_sidechain_replay_and_synthetic_lines(tmp_path: Path) -> None:
    lines = lines_of(Path(__file__).parent.parent / "data/agent-logs/samples" / SAMPLE)
    assistant = [d for d in lines if d.get("type") == "assistant"]
    sidechain = copy.deepcopy(assistant[-1])
    sidechain.update(isSidechain=True, requestId="req_side")
    sidechain["message"]["id"] = "msg_side"
    replay = copy.deepcopy(sidechain)  # the same subagent call written again
    synthetic = copy.deepcopy(assistant[-1])
    synthetic["message"].update(id="msg_syn", model="<synthetic>")
    write_lines(tmp_path / "p/s.jsonl", [*lines, sidechain, synthetic, replay])
    _, rows = run("claude-code", tmp_path / "p", tmp_path / "l.jsonl")
    assert [r["call_id"] for r in rows] == ["msg_mock_2", "msg_mock_3", "msg_side"]
    assert rows[-1]["sidechain"] is True


def test_default_root_follows_claude_config_dir(tmp_path: Path, monkeypatch) -> None:
    from eloledger.agents.importer import default_roots

    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_roots("claude-code") == [tmp_path / ".claude"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path}/a,{tmp_path}/b")
    assert default_roots("claude-code") == [tmp_path / "a", tmp_path / "b"]
