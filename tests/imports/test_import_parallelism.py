"""The import picks its own parallelism from what its first files cost to read.

Many small session files are read by the parent alone (handing each to a worker costs about
what reading it does); a few large ones go to workers. The choice is made from a measured
sample, never from a wall-clock assertion here: the rule is checked on the costs the bench
measured, and real imports of both shapes are checked for the choice they made and for
writing exactly what a serial import writes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from eloledger.agents import importer, importplan
from eloledger.agents.importplan import Sample, choose_workers

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_import  # noqa: E402 - the bench's corpus builder: the shapes Claude Code writes


def test_rule_on_the_costs_the_bench_measured() -> None:
    # 8,600 sessions of ~16 KB (138 MB): the 20 ms sample read ~230 files, ~60 us each
    small = Sample(seconds=0.02, files=230, nbytes=230 * 16_000)
    plan = choose_workers(small, rest_files=8_400, rest_bytes=134_000_000, most=2)
    assert plan.workers == 1
    assert plan.file_s < importplan.POOL_FILE_S <= plan.rest_s
    # 9 sessions of ~15 MB (129 MB): the sample was the first file, ~60 ms
    large = Sample(seconds=0.06, files=1, nbytes=15_000_000)
    plan = choose_workers(large, rest_files=8, rest_bytes=114_000_000, most=2)
    assert plan.workers == 2
    assert plan.file_s >= importplan.POOL_FILE_S and plan.rest_s >= importplan.POOL_WORK_S
    # large files, but too few bytes left to repay a fork; or one file left: serial
    assert choose_workers(large, 2, 1_000_000, 4).workers == 1
    assert choose_workers(large, 1, 50_000_000, 4).workers == 1
    assert choose_workers(large, 8, 114_000_000, 1).workers == 1  # one core
    assert choose_workers(large, 8, 114_000_000, 4).workers == 4


def test_busy_cores_leave_the_import_serial(tmp_path: Path, monkeypatch) -> None:
    """Every core busy (load average >= cores): one process, even for costly files."""
    monkeypatch.setattr(importplan, "cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.3, 1.0, 1.0))
    assert importplan.idle_cores() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 1.0, 1.0))
    assert importplan.idle_cores() == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 1.0, 1.0))
    monkeypatch.setattr(importplan, "POOL_BYTES", 0)
    monkeypatch.delenv("ELOLEDGER_IMPORT_WORKERS", raising=False)
    root = _corpus(tmp_path / "busy", sessions=3, messages=300)
    data, _ = _import(root, tmp_path / "busy.jsonl")
    assert data["parallel"] == {"workers": 1} and data["calls"] > 0


def _corpus(home: Path, sessions: int, messages: int) -> Path:
    corpus = bench_import.Corpus(home, seed=11, partial=0.2, pad=1200)
    for index in range(sessions):
        lines = corpus.session(index, messages=messages)
        if index % 7 == 6:
            corpus.resumed(lines, messages=2)
    return corpus.root


def _import(root: Path, ledger: Path) -> tuple[dict, bytes]:
    report = importer.import_logs("claude-code", [root], ledger, settle_s=0.0)
    data = importer.report_json(report, ledger)
    json.dumps(data)  # the plan is part of the JSON report
    return data, ledger.read_bytes()


@pytest.fixture
def quick_thresholds(monkeypatch) -> None:
    """Test-sized imports: no minimum size or work, two idle cores on any machine.

    The per-file cost rule (POOL_FILE_S) stays as it is: it is what tells the shapes apart.
    """
    monkeypatch.delenv("ELOLEDGER_IMPORT_WORKERS", raising=False)
    monkeypatch.setattr(importplan, "POOL_BYTES", 0)
    monkeypatch.setattr(importplan, "POOL_WORK_S", 0.0)
    monkeypatch.setattr(importplan, "idle_cores", lambda: 2)


@pytest.mark.usefixtures("quick_thresholds")
def test_many_small_files_are_read_serially(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "small", sessions=300, messages=1)  # ~300 files of ~5 KB
    data, _ = _import(root, tmp_path / "small.jsonl")
    plan = data["parallel"]
    assert plan["workers"] == 1
    assert plan["sample_files"] >= 1 and plan["file_s"] < importplan.POOL_FILE_S
    assert data["calls"] > 250 and data["files"] > 300


@pytest.mark.usefixtures("quick_thresholds")
def test_a_few_large_files_go_to_workers_and_write_what_serial_writes(
    tmp_path: Path, monkeypatch
) -> None:
    # three ~5 MB sessions (reading one takes ~10-50 ms; the rule's bar is 2 ms per file)
    root = _corpus(tmp_path / "large", sessions=3, messages=1000)
    data, ledger = _import(root, tmp_path / "auto.jsonl")
    plan = data["parallel"]
    assert plan["workers"] == 2 and plan["sample_files"] == 1
    assert plan["file_s"] >= importplan.POOL_FILE_S
    monkeypatch.setenv("ELOLEDGER_IMPORT_WORKERS", "1")
    serial, serial_ledger = _import(root, tmp_path / "serial.jsonl")
    assert serial["parallel"] == {"workers": 1}
    assert ledger == serial_ledger
    for key in ("calls", "duplicates", "repeats", "bytes_read", "files"):
        assert data[key] == serial[key], key


def test_workers_take_rounds_and_leave_huge_files_to_the_parent(tmp_path: Path, monkeypatch):
    """Memory with workers is bounded by a round, not the import: files go out in rounds of
    ROUND_BYTES and a file over STREAM_BYTES is streamed by the parent; the ledger, offsets
    and report equal a serial import's."""
    from eloledger.agents import forkpool, logscan

    root = _corpus(tmp_path / "logs", sessions=8, messages=40)
    sizes = sorted(p.stat().st_size for p in root.rglob("*.jsonl"))
    monkeypatch.setattr(logscan, "STREAM_BYTES", sizes[-3])  # the two largest: streamed
    monkeypatch.setattr(logscan, "ROUND_BYTES", sizes[-3] * 2)
    monkeypatch.setattr(importplan, "POOL_BYTES", 0)
    rounds: list[list] = []
    real = forkpool.ForkPool.imap

    def spy(self, func, tasks, weights):
        rounds.append(list(tasks))
        return real(self, func, tasks, weights)

    monkeypatch.setattr(forkpool.ForkPool, "imap", spy)
    results = []
    for workers in ("2", "1"):
        monkeypatch.setenv("ELOLEDGER_IMPORT_WORKERS", workers)
        ledger = tmp_path / f"w{workers}.jsonl"
        data, rows = _import(root, ledger)
        saved = json.loads(ledger.with_name(ledger.name + ".import.json").read_text())
        del data["ledger"]
        results.append((data.pop("parallel")["workers"], data, rows, saved["files"]))
    (pool_workers, *pooled), (serial_workers, *serial) = results
    assert (pool_workers, serial_workers) == (2, 1)
    assert pooled == serial and serial[0]["calls"] > 100
    assert len(rounds) >= 2  # several rounds
    streamed = [t for r in rounds for t in r if t is None]
    assert len(streamed) == 2  # the two largest files never went to a worker


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_a_worker_forked_under_the_lock_closes_it(tmp_path: Path) -> None:
    """Workers start after the sample, inside the import's lock: each closes the lock's
    descriptor first, so no worker keeps the ledger locked."""
    import fcntl

    from eloledger.agents import forkpool

    fd = os.open(tmp_path / "l.jsonl.import.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with forkpool.ForkPool(2, child_closes=(fd,)) as pool:
            assert pool.apply(_is_open, (fd,)) is False
            assert _is_open(fd)  # the parent keeps it
        with forkpool.ForkPool(2) as pool:
            assert pool.apply(_is_open, (fd,)) is True  # what the option prevents
    finally:
        os.close(fd)
