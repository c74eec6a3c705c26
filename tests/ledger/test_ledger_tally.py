"""`tokens` folds the ledger batch by batch (ledger/tally.py).

The streamed tally must give exactly what the whole-ledger summary gives (summarize,
summary_warnings, add_costs, add_latency, judge_summary): same groups, same numbers, same
warnings in the same order, same "first at file:line" evidence, on ledgers with every odd
thing the summary has a rule for, in many small batches and in two worker processes. And its
memory must not grow with the ledger's length.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from summary_oracle import (
    add_costs,
    add_latency,
    judge_summary,
    summarize,
    summary_warnings,
)

from eloledger.cli import main
from eloledger.ledger import tally as tally_module
from eloledger.ledger.columns import PRICE_COLUMNS, SUMMARY_COLUMNS
from eloledger.ledger.merge import read_ledgers
from eloledger.ledger.prices import Price
from eloledger.ledger.tally import read_tally, stream_tally

PRICES = {"m-a": Price(input=1.0, output=2.0, cache_read=0.5), "m-b": Price(input=3.0, output=4.0)}
BY = ("arm", "task", "session", "model", "day", "project", "source")


def varied_rows(seed: int, n: int, *, guide: bool = False, ts: str = "increasing") -> list[dict]:
    """Rows with everything the summary has a rule for, mixed at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"task_id": f"t{rng.integers(0, 7)}"}
        if rng.random() < 0.95:
            row["arm"] = str(rng.choice(["single", "bo4", "cot", "17"]))
        if rng.random() < 0.05:
            del row["task_id"]
        role = rng.choice(["sample", "select", "judge", "probe", "checkpoint", None])
        if role is not None:
            row["role"] = str(role)
        status = rng.choice(["ok", "error", None, None])
        if status is not None:
            row["status"] = str(status)
        elif rng.random() < 0.3:
            row["error"] = "HTTP 502"  # no status, an error: a failed call
        usage = rng.random()
        if usage < 0.7:
            p, c = int(rng.integers(0, 500)), int(rng.integers(0, 300))
            row["prompt_tokens"], row["completion_tokens"] = p, c
            if rng.random() < 0.8:
                row["total_tokens"] = p + c
            if rng.random() < 0.05 and i > 45:  # (the evidence's line is not the first)
                row["total_tokens"] = p + c + 7  # does not add up ...
                if rng.random() < 0.5:
                    row["reasoning_tokens"] = 7  # ... unless reasoning is outside completion
            if rng.random() < 0.03 and i > 370:  # (in the second worker's slice)
                row["prompt_tokens"] = p + 0.5  # fractional
            row["usage_source"] = str(rng.choice(["server", "server", "estimated"]))
        elif usage < 0.8:
            row["usage_source"] = "missing"
        if rng.random() < 0.8:
            row["latency_ms"] = float(
                rng.choice([100.0, 250.5, 250.5, float(rng.integers(1, 900))])
            )
        if rng.random() < 0.7:
            row["session"] = f"s{rng.integers(0, 3)}"
        if rng.random() < 0.8:
            row["model"] = str(rng.choice(["m-a", "m-b", "m-unpriced"]))
            if rng.random() < 0.2:
                row["cached_tokens"] = int(rng.integers(0, 50))
        if rng.random() < 0.5:
            row["project"] = str(rng.choice(["/w/api", "/w/web"]))
            row["source"] = str(rng.choice(["claude-code", "codex"]))
        row["content"] = "x" * int(rng.integers(0, 200))
        if ts == "increasing":
            row["ts"] = 1.7e9 + i * 3600.0  # a few days
        elif ts == "repeated":
            row["ts"] = 1.7e9 + (i // 2) * 10.0
        if guide:
            for old, new in (("arm", "strategy"), ("prompt_tokens", "input_tokens")):
                if old in row:
                    row[new] = row.pop(old)
        rows.append(row)
    return rows


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def columns(by: str, prices: bool) -> tuple[str, ...]:
    key = {"task": "task_id", "day": "ts"}.get(by, by)
    names = (*SUMMARY_COLUMNS, "latency_ms", "ts", *(PRICE_COLUMNS if prices else ()))
    return names if key in names else (*names, key)


def whole(paths: Any, by: str, prices: dict | None) -> tuple[list, list, Any]:
    """What `tokens` computed before the streamed fold: the whole ledger and summary.py's functions."""
    ledger = read_ledgers(paths, columns=columns(by, bool(prices)))
    groups = summarize(ledger, by=by)
    warnings = [*ledger.warnings, *summary_warnings(ledger, by=by)]
    if prices:
        warnings += add_costs(groups, ledger, prices, by=by)
    add_latency(groups, ledger, by=by)
    return groups, warnings, judge_summary(ledger)


def same(tallied: tuple[Any, list[str]], expected: tuple[list, list, Any]) -> None:
    tally, warnings = tallied
    groups, want_warnings, judge = expected
    got = tally.groups()
    assert [g["name"] for g in got] == [g["name"] for g in groups]
    for mine, theirs in zip(got, groups, strict=True):
        assert list(mine) == list(theirs)  # the same keys in the same order (JSON output)
        cost_mine, cost_theirs = mine.pop("cost", None), theirs.pop("cost", None)
        assert mine == theirs
        assert cost_mine == pytest.approx(cost_theirs, rel=1e-12)  # a float sum, by batch
    assert warnings == want_warnings
    assert tally.judge_summary() == judge


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of ~2 KB: a few rows each, so every rule meets many batch boundaries."""
    monkeypatch.setattr(tally_module, "_BATCH_BYTES", 2048)
    monkeypatch.setattr(tally_module, "_BUFFER", 64)  # and the sparse sums compact often


@pytest.mark.parametrize("by", BY)
@pytest.mark.parametrize("seed", [1, 2])
def test_streamed_tally_equals_the_whole_ledger_summary(
    tmp_path: Path, small_batches: None, by: str, seed: int
) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(seed, 600, guide=seed == 2))
    for workers in (1, 2):
        streamed = stream_tally(path, columns(by, True), by, PRICES, workers=workers)
        assert streamed is not None, "one file in writing order must be streamed"
        tally, torn = streamed
        assert tally.rows == 600 and torn == []
        warnings = tally.warnings(lambda i: f"{path}:{i + 1}")
        same((tally, warnings), whole(path, by, PRICES))


def test_the_tally_has_the_evidence_lines_and_a_torn_tail(
    tmp_path: Path, small_batches: None
) -> None:
    rows = varied_rows(3, 400)
    path = write(tmp_path / "l.jsonl", rows)
    with path.open("a") as fh:
        fh.write('{"arm": "single", "task_id": "t1", "total_tok')  # a crash mid-write
    tally, warnings = read_tally(path, columns("arm", False), "arm", None, workers=2)
    assert warnings[0].startswith(f"{path}:401: skipped a torn last line")
    assert any("first at" in w for w in warnings)  # fractional counts: the line is named
    same((tally, warnings), whole(path, "arm", None))


@pytest.mark.parametrize("case", ["repeated ts", "no ts", "two files", "a copy", "blank line"])
def test_what_cannot_stream_is_read_whole_with_the_duplicate_check(
    tmp_path: Path, small_batches: None, case: str
) -> None:
    rows = varied_rows(
        4, 300, ts={"repeated ts": "repeated", "no ts": "none"}.get(case, "increasing")
    )
    path = write(tmp_path / "a.jsonl", rows)
    paths: Any = path
    if case == "repeated ts":
        with path.open("a") as fh:
            fh.write(json.dumps(rows[-1]) + "\n")  # the same row twice: counted once
    if case == "two files":
        paths = [path, write(tmp_path / "b.jsonl", varied_rows(5, 200))]
    if case == "a copy":
        paths = [path, write(tmp_path / "copy.jsonl", rows[:50])]
    if case == "blank line":
        path.write_text(path.read_text().replace("\n", "\n\n", 1))
    if case in ("repeated ts", "no ts", "blank line"):
        assert stream_tally(path, columns("arm", False), "arm", None) is None
    tallied = read_tally(paths, columns("arm", True), "arm", PRICES)
    expected = whole(paths, "arm", PRICES)
    same(tallied, expected)
    if case in ("repeated ts", "a copy"):
        assert any("duplicate" in w for w in tallied[1])


def test_the_cli_prints_the_same_json_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(6, 500))
    assert main(["tokens", str(path), "--format", "json", "--by", "session"]) == 0
    out = json.loads(capsys.readouterr().out)
    groups, warnings, judge = whole(path, "session", None)
    assert out["groups"] == sorted(groups, key=lambda g: str(g["name"]))
    assert out["warnings"] == warnings and out["judge"] == judge


def test_checkpoint_rows_are_not_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """the agent checkpoints carry no token fields: not a call, not usage-missing."""
    calls = [
        {"arm": "a", "task_id": "t1", "session": "s1", "role": "sample", "status": "ok",
         "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "ts": 1.0},
        {"arm": "a", "task_id": "t1", "session": "s1", "role": "checkpoint", "step": 3, "ts": 2.0},
        {"arm": "a", "task_id": "t2", "session": "s1", "role": "checkpoint", "ts": 3.0},
    ]  # fmt: skip
    path = write(tmp_path / "l.jsonl", calls)
    assert main(["tokens", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (group,) = out["groups"]
    assert (group["calls"], group["ok"], group["usage_missing"], group["total_tokens"]) == (
        1,
        1,
        0,
        15,
    )
    assert group["task_mean_total_tokens"] == 15  # t2 has only a checkpoint: not a task run
    assert out["warnings"] == [] and out["judge"] is None


def peak_mib(path: Path) -> float:
    """Peak RSS (MiB, VmHWM: ru_maxrss would carry this test's own over exec) of `tokens` on
    ``path``, in one process (no forked worker to add up)."""
    code = (
        "import sys\n"
        "from eloledger.ledger import fastread\n"
        "fastread._PARALLEL_MIN_BYTES = 1 << 62\n"
        "from eloledger.cli import main\n"
        "status = main(['tokens', sys.argv[1], '--format', 'json'])\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
        "print(hwm.split()[1], file=sys.stderr)\n"
        "raise SystemExit(status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def test_memory_does_not_grow_with_the_ledger(tmp_path: Path) -> None:
    """120k rows (~40 MB) and 4x that: the tally holds groups, not rows (before: the whole
    file's columns, ~4x more at 4x the rows)."""
    one = varied_rows(7, 2000)
    lines = []
    for k in range(60):  # the same calls again and again, each at its own time
        for i, row in enumerate(one):
            lines.append(json.dumps({**row, "ts": 1.7e9 + (k * len(one) + i) * 0.5}))
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(lines) + "\n")
    big = tmp_path / "big.jsonl"
    with big.open("w") as fh:
        for k in range(4):
            shift = k * len(lines) * 0.5
            for line in lines:
                row = json.loads(line)
                row["ts"] += shift
                fh.write(json.dumps(row) + "\n")
    small_peak, big_peak = peak_mib(small), peak_mib(big)
    assert os.path.getsize(big) > 150e6
    assert big_peak - small_peak < 20, (small_peak, big_peak)


@pytest.mark.parametrize("odd_from", [0, 450])
def test_latencies_that_are_not_whole_microseconds(
    tmp_path: Path, small_batches: None, odd_from: int
) -> None:
    """Latencies pack into one int64 while they are whole microseconds; the first that is not
    (1/3 ms, 1e-7 ms, -0.0, 2e12 ms) widens every key, in whichever slice it comes, and the
    percentiles stay exactly the whole ledger's (450: only the second worker's slice has one)."""
    rows = varied_rows(7, 600)
    odd = [1 / 3, 1e-7, -0.0, 2e12, 250.5, 0.0001234567]
    for i, row in enumerate(rows[odd_from:], start=odd_from):
        if "latency_ms" in row and row.get("arm") == "cot":  # its p50 and p95 are odd ones
            row["latency_ms"] = odd[i % len(odd)] + (i % 5) / 3
    path = write(tmp_path / "l.jsonl", rows)
    for workers in (1, 2):
        streamed = stream_tally(path, columns("arm", False), "arm", None, workers=workers)
        assert streamed is not None
        tally, _ = streamed
        assert not tally.arms.latencies.micro  # widened
        same((tally, tally.warnings(lambda i: f"{path}:{i + 1}")), whole(path, "arm", None))


def test_whole_microsecond_latencies_stay_packed(tmp_path: Path, small_batches: None) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(8, 600))
    tally, _ = stream_tally(path, columns("arm", False), "arm", None, workers=2)
    assert tally.arms.latencies.micro
    assert tally.arms.latencies.sums.compact()[0].dtype == np.int64
    same((tally, tally.warnings(lambda i: f"{path}:{i + 1}")), whole(path, "arm", None))


@pytest.mark.parametrize("ts", [[], [1.5]])
def test_lists_where_numbers_belong_read_as_the_exact_reader_reads_them(
    tmp_path: Path, ts: list
) -> None:
    """Lists of one length made a 2-D column (``{"ts": []}`` failed with a traceback)."""
    rows = [{"task_id": f"t{i}", "arm": "a", "ts": ts, "total_tokens": i} for i in range(6)]
    path = write(tmp_path / "l.jsonl", rows)
    same(read_tally(path, columns("arm", True), "arm", None), whole(path, "arm", None))
