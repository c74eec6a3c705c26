"""inspect_ai logs written by inspect_ai 0.3.285 itself (tests/data/agent-logs/inspect/task.py.txt
run against eloledger's simulator): .eval zips with zstd members, cache-read events, .json logs.

The expected totals are what inspect printed at the end of each run ("429 tokens [I: 12, O: 417]";
the run answered from inspect's cache printed no usage and its header.model_usage is empty)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from eloledger.agents.inspect_ai import usage_of
from import_support import DATA, run

INSPECT = DATA / "inspect"


def _only(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir(exist_ok=True)
    for name in names:
        shutil.copyfile(INSPECT / name, folder / name)
    return folder


def test_eval_zip_with_zstd_members(tmp_path: Path) -> None:
    with zipfile.ZipFile(INSPECT / "billed.eval") as zf:
        assert {i.compress_type for i in zf.infolist()} == {93}  # zstd: zipfile alone cannot
    report, rows = run("inspect", _only(tmp_path, "billed.eval"), tmp_path / "l.jsonl")
    assert len(rows) == 4 and not report.unknown
    assert sum(r["prompt_tokens"] for r in rows) == 12
    assert sum(r["completion_tokens"] for r in rows) == 417
    assert sum(r["total_tokens"] for r in rows) == 429
    assert sorted(r["session"] for r in rows) == ["q1#1", "q1#2", "q2#1", "q2#2"]
    assert {r["model"] for r in rows} == {"openai/sim-small"}
    assert {r["project"] for r in rows} == {"tiny"}
    assert all(r["source"] == "inspect" and r["usage_source"] == "log" for r in rows)


def test_cache_read_events_are_not_billed(tmp_path: Path) -> None:
    report, rows = run("inspect", _only(tmp_path, "cache-read.eval"), tmp_path / "l.jsonl")
    assert rows == [] and report.files == 1 and not report.unknown


def test_json_log_and_a_second_import(tmp_path: Path) -> None:
    folder = _only(tmp_path, "billed-text.json", "billed.eval")
    ledger = tmp_path / "l.jsonl"
    _, rows = run("inspect", folder, ledger)
    assert sum(r["total_tokens"] for r in rows) == 429 + 394
    shutil.copyfile(folder / "billed.eval", folder / "retry-copy.eval")  # same events again
    report, rows = run("inspect", folder, ledger)
    assert report.calls == 0 and report.duplicates == 4 and len(rows) == 8


def test_deflated_members_still_read(tmp_path: Path) -> None:
    """Older .eval files (before 0.3.206) used deflate."""
    src = zipfile.ZipFile(INSPECT / "billed.eval")
    from eloledger.agents.inspect_ai import read_member

    out = tmp_path / "logs" / "old.eval"
    out.parent.mkdir()
    with open(INSPECT / "billed.eval", "rb") as fh, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, read_member(src, fh, name), compress_type=zipfile.ZIP_DEFLATED)
    _, rows = run("inspect", out.parent, tmp_path / "l.jsonl")
    assert sum(r["total_tokens"] for r in rows) == 429


def test_usage_mapping_before_and_after_0_3_184() -> None:
    usage = {
        "input_tokens": 100,
        "output_tokens": 50,
        "input_tokens_cache_read": 400,
        "input_tokens_cache_write": 20,
        "reasoning_tokens": 10,
    }
    now = usage_of(usage)
    assert (now.prompt_tokens, now.cached_tokens, now.cache_write_tokens) == (520, 400, 20)
    assert now.completion_tokens == 50 and now.reasoning_tokens == 10
    assert usage_of(usage, reads_split=False).prompt_tokens == 120  # reads were in input
    assert json.dumps(now.as_row())
