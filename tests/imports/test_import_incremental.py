"""Incremental, idempotent import while the CLIs write: offsets, torn lines, held calls."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from eloledger.agents.importer import import_logs
from import_support import SAMPLES, lines_of, run, write_lines

CLAUDE = SAMPLES / "claude-project-session.jsonl"


def test_second_import_adds_nothing_and_reads_nothing(tmp_path: Path) -> None:
    write_lines(tmp_path / "p/s.jsonl", lines_of(CLAUDE))
    ledger = tmp_path / "l.jsonl"
    run("claude-code", tmp_path / "p", ledger)
    before = ledger.read_bytes()
    report, _ = run("claude-code", tmp_path / "p", ledger)
    assert report.calls == 0 and report.bytes_read == 0
    assert ledger.read_bytes() == before


def test_growing_file_with_a_torn_last_line(tmp_path: Path) -> None:
    raw = CLAUDE.read_bytes()
    log = tmp_path / "p/s.jsonl"
    log.parent.mkdir()
    cut = raw.index(b'"msg_mock_3"') + 40  # in the middle of the last assistant line
    log.write_bytes(raw[:cut])
    ledger = tmp_path / "l.jsonl"
    report, rows = run("claude-code", tmp_path / "p", ledger)
    assert [r["call_id"] for r in rows] == ["msg_mock_2"]
    assert report.waiting_lines == 1 and not report.unknown
    with open(log, "ab") as fh:
        fh.write(raw[cut:])
    report, rows = run("claude-code", tmp_path / "p", ledger)
    assert [r["call_id"] for r in rows] == ["msg_mock_2", "msg_mock_3"]
    assert report.calls == 1


def test_last_call_of_a_file_being_written_waits_then_merges_its_repeats(tmp_path: Path) -> None:
    """Claude writes one line per content block; the second may come after an import ran."""
    lines = lines_of(CLAUDE)
    second_block = (
        next(i for i, d in enumerate(lines) if d.get("message", {}).get("id") == "msg_mock_2") + 1
    )
    lines[second_block - 1]["message"]["usage"]["output_tokens"] = 1  # non-final usage first
    log = write_lines(tmp_path / "p/s.jsonl", lines[:second_block])
    ledger = tmp_path / "l.jsonl"
    report, rows = run("claude-code", tmp_path / "p", ledger, settle_s=60.0)
    assert rows == [] and report.held == 1  # the file was written just now: msg_mock_2 waits
    write_lines(log, lines[second_block:], mode="a")
    os.utime(log, (1, 1))  # the session ended long ago
    report, rows = run("claude-code", tmp_path / "p", ledger, settle_s=60.0)
    assert [(r["call_id"], r["completion_tokens"]) for r in rows] == [
        ("msg_mock_2", 22),
        ("msg_mock_3", 23),
    ]


def test_replaced_file_is_read_again_without_duplicates(tmp_path: Path) -> None:
    log = write_lines(tmp_path / "p/s.jsonl", lines_of(CLAUDE))
    ledger = tmp_path / "l.jsonl"
    run("claude-code", tmp_path / "p", ledger)
    write_lines(tmp_path / "new.jsonl", lines_of(CLAUDE))
    os.replace(tmp_path / "new.jsonl", log)  # a new inode at the same path
    report, rows = run("claude-code", tmp_path / "p", ledger)
    assert report.restarted == [str(log)] and report.calls == 0 and len(rows) == 2


def test_file_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    log = write_lines(tmp_path / "p/s.jsonl", lines_of(CLAUDE)[:6])
    ledger = tmp_path / "l.jsonl"
    run("claude-code", tmp_path / "p", ledger)
    with open(log, "r+b") as fh:  # same inode, new content, longer: the old offset is mid-line
        fh.write(b"\n" + CLAUDE.read_bytes())
    report, rows = run("claude-code", tmp_path / "p", ledger)
    assert report.restarted == [str(log)] and not report.unknown
    assert [r["call_id"] for r in rows] == ["msg_mock_2", "msg_mock_3"]


def test_lost_state_file_costs_a_reread_not_a_duplicate(tmp_path: Path) -> None:
    write_lines(tmp_path / "p/s.jsonl", lines_of(CLAUDE))
    ledger = tmp_path / "l.jsonl"
    run("claude-code", tmp_path / "p", ledger)
    state = ledger.with_name("l.jsonl.import.json")
    state.write_text("{not json")
    report, rows = run("claude-code", tmp_path / "p", ledger)
    assert report.calls == 0 and report.duplicates == 3 and len(rows) == 2  # 3 lines, 2 calls
    assert orjson.loads(state.read_bytes())["files"]  # rewritten whole


def test_unknown_shapes_are_counted_with_file_and_line_never_zero(tmp_path: Path) -> None:
    lines = lines_of(CLAUDE)
    odd = {"type": "assistant", "message": {"id": "m9", "usage": {"tokens_in": 5}}}
    log = write_lines(tmp_path / "p/s.jsonl", [*lines, odd])
    with open(log, "a") as fh:
        fh.write("this is not json\n")
        fh.write('{"type": "brand-new-kind", "message": {"usage": {"input_tokens": 4}}}\n')
    report, rows = run("claude-code", tmp_path / "p", tmp_path / "l.jsonl")
    assert len(rows) == 2  # the odd call is not a zero-token row
    assert report.unknown == {
        "assistant message.usage without token counts": 1,
        "not JSON": 1,
        "type='brand-new-kind' with message.usage": 1,
    }
    assert report.where["not JSON"] == [f"{log}:{len(lines) + 2}"]


def test_two_imports_into_one_ledger_at_once_refuse(tmp_path: Path) -> None:
    import fcntl

    from eloledger.errors import UserError

    write_lines(tmp_path / "p/s.jsonl", lines_of(CLAUDE))
    ledger = tmp_path / "l.jsonl"
    with open(tmp_path / "l.jsonl.import.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(UserError, match="another import"):
            import_logs("claude-code", [tmp_path / "p"], ledger)
    assert not ledger.exists() or ledger.read_bytes() == b""


def test_a_large_file_streams_in_bounded_memory_with_progress(tmp_path: Path) -> None:
    import tracemalloc

    lines = lines_of(CLAUDE)
    filler = orjson.dumps({"type": "user", "message": {"content": "x" * 4000}}) + b"\n"
    log = tmp_path / "p/s.jsonl"
    log.parent.mkdir()
    with open(log, "wb") as fh:
        for _ in range(40):
            fh.write(filler * 200)  # 0.8 MB of lines that carry no tokens
            fh.write(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    size = log.stat().st_size
    seen: list[tuple[int, int]] = []
    tracemalloc.start()
    try:
        report = import_logs(
            "claude-code",
            [log],
            tmp_path / "l.jsonl",
            settle_s=0,
            progress=lambda d, t: seen.append((d, t)),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.calls == 2  # the same two calls (three lines), 40 times
    assert report.repeats + report.duplicates == 40 * 3 - 2
    assert peak < 8_000_000 < size  # a few read chunks, not the 32 MB file
    assert seen[-1] == (size, size) and len(seen) >= 30


def test_cli_progress_on_stderr(tmp_path: Path, capsys) -> None:
    from eloledger.cli import main

    write_lines(tmp_path / "p/s.jsonl", lines_of(CLAUDE))
    assert (
        main(
            [
                "import",
                "claude-code",
                str(tmp_path / "p"),
                "-o",
                str(tmp_path / "l.jsonl"),
                "--progress",
            ]
        )
        == 0
    )
    assert "import: 0.0/0.0 MB" in capsys.readouterr().err


def test_lines_longer_than_a_read_chunk_import_as_with_large_chunks(
    tmp_path: Path, monkeypatch
) -> None:
    """A read starts at a line and grows until it holds one: every line longer than the
    chunk, then a torn tail, give the ledger, offsets and report a 1 MiB chunk gives."""
    from eloledger.agents import logscan

    lines = lines_of(CLAUDE)
    filler = orjson.dumps({"type": "user", "message": {"content": "x" * 300}}) + b"\n"
    data = b"".join(filler + orjson.dumps(d) + b"\n" for d in lines)
    results = []
    for chunk in (1 << 20, 64):
        monkeypatch.setattr(logscan, "CHUNK", chunk)
        log = tmp_path / f"c{chunk}/p/s.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(data + b'{"type": "assistant", "message": {"usage": ')
        ledger = tmp_path / f"c{chunk}/l.jsonl"
        report, _ = run("claude-code", log.parent, ledger)
        saved = orjson.loads(ledger.with_name("l.jsonl.import.json").read_bytes())
        (state,) = saved["files"].values()
        results.append((ledger.read_bytes(), state["offset"], state["line"], report.as_json()))
    assert results[0][3]["calls"] > 0 and results[0][3]["waiting_lines"] == 1
    assert results[0][1] == len(data)
    assert results[1] == results[0]
