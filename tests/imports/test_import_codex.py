"""Codex rollouts: per-call records, re-emitted and cumulative counters, resumes and forks."""

from __future__ import annotations

import copy
from pathlib import Path

from import_support import SAMPLES, lines_of, run, totals_by_session, write_lines

THREAD = "01a22efe-bb2a-7670-bc00-0bdbb1785213"


def _sample() -> list[dict]:
    return lines_of(SAMPLES / "codex-rollout.jsonl")


def _final_total(lines: list[dict]) -> int:
    counts = [d for d in lines if d.get("payload", {}).get("type") == "token_count"]
    return counts[-1]["payload"]["info"]["total_token_usage"]["total_tokens"]


def test_records_give_one_row_per_call_and_match_the_running_total(tmp_path: Path) -> None:
    lines = _sample()
    write_lines(tmp_path / "sessions/2026/12/01/rollout-a.jsonl", lines)
    _, rows = run("codex", tmp_path, tmp_path / "l.jsonl")
    # two calls in the first turn, one in the resumed turn (exec resume appended to the file)
    assert [r["total_tokens"] for r in rows] == [1010, 2020, 1010]
    assert sum(r["total_tokens"] for r in rows) == _final_total(lines) == 4040
    assert rows[0]["prompt_tokens"] == 1000  # Codex input_tokens already includes the cache
    assert rows[0]["cached_tokens"] == 100 and rows[0]["reasoning_tokens"] == 1
    assert {r["session"] for r in rows} == {THREAD}
    assert {r["model"] for r in rows} == {"gpt-5-codex"}
    assert rows[0]["project"] == "/home/user/work"


def test_re_emitted_token_count_in_an_older_rollout(tmp_path: Path) -> None:
    """Before token_usage_record: last_token_usage per call; an unchanged total is a repeat."""
    lines = [d for d in _sample() if d.get("type") != "token_usage_record"]
    at = next(i for i, d in enumerate(lines) if d.get("payload", {}).get("type") == "token_count")
    lines.insert(at + 1, copy.deepcopy(lines[at]))  # re-emitted, same running total
    write_lines(tmp_path / "sessions/rollout-b.jsonl", lines)
    report, rows = run("codex", tmp_path, tmp_path / "l.jsonl")
    assert [r["total_tokens"] for r in rows] == [1010, 2020, 1010]


def test_forked_rollout_replaying_history_counts_only_its_new_calls(tmp_path: Path) -> None:
    parent = _sample()
    fork = copy.deepcopy(parent)
    fork[0]["payload"]["id"] = "fork-thread"
    new = copy.deepcopy([d for d in parent if d.get("type") == "token_usage_record"][-1])
    new["payload"].update(thread_id="fork-thread", turn_id="turn-fork", response_id="resp_fork")
    write_lines(tmp_path / "sessions/rollout-parent.jsonl", parent)
    write_lines(tmp_path / "sessions/rollout-fork.jsonl", [*fork, new])
    report, rows = run("codex", tmp_path, tmp_path / "l.jsonl")
    assert len(rows) == 4 and report.duplicates == 3
    assert totals_by_session(rows)["fork-thread"]["total_tokens"] == 1010


def test_same_response_id_in_another_turn_is_another_call(tmp_path: Path) -> None:
    """The resumed turn reused response id resp_mock_1 (a mock server did): the turn tells."""
    write_lines(tmp_path / "sessions/rollout-a.jsonl", _sample())
    _, rows = run("codex", tmp_path, tmp_path / "l.jsonl")
    assert [r["call_id"] for r in rows].count("resp_mock_1") == 2


def test_default_root_follows_codex_home(tmp_path: Path, monkeypatch) -> None:
    from eloledger.agents.importer import default_roots

    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_roots("codex") == [tmp_path / ".codex"]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    assert default_roots("codex") == [tmp_path / "ch"]
