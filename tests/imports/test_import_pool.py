"""An import spread over worker processes writes exactly what a serial import writes.

The workers only parse; the key index, the per-file window and the hold are applied in the
parent in file order. Each case imports the same logs twice (serial, then forced onto a pool of
two workers) and compares the ledger bytes, the report and the saved offsets; then appends to
the logs and imports again, so the incremental path (saved offsets, parser state) is compared
too. The corpus has what the dedupe rules are about: per-block repeats, resumed sessions that
copy earlier calls into a newer file, sidechains, <synthetic> lines, odd lines and torn tails.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from eloledger.agents import forkpool, importer, importplan
from import_support import SAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_import  # noqa: E402 - the bench's corpus builder: the shapes Claude Code writes


def _import(root: Path, ledger: Path, kind: str, workers: int, monkeypatch) -> dict:
    monkeypatch.setenv("ELOLEDGER_IMPORT_WORKERS", str(workers))
    monkeypatch.setattr(importplan, "POOL_BYTES", 0)  # a pool for any size: the corpus is small
    started: list[int] = []
    real = forkpool.ForkPool.__init__

    def spy(self, count, **kw):
        started.append(count)
        real(self, count, **kw)

    monkeypatch.setattr(forkpool.ForkPool, "__init__", spy)
    report = importer.import_logs(kind, [root], ledger, settle_s=0.0)
    assert started == ([workers] if workers > 1 else []), "the pool was (not) used as asked"
    assert report.plan.workers == workers
    state = json.loads(ledger.with_name(ledger.name + ".import.json").read_text())
    # paths differ between the two copies of the corpus: compare them relative to the root
    files = {str(Path(k).relative_to(root)): v for k, v in state["files"].items()}
    for item in files.values():
        item.pop("dev"), item.pop("ino")
    data = report.as_json()
    data["restarted"] = [str(Path(p).relative_to(root)) for p in data["restarted"]]
    for shape in data["unknown"]:
        shape["examples"] = [str(Path(e).relative_to(root)) for e in shape["examples"]]
    return {"report": data, "files": files, "ledger": ledger.read_bytes()}


def _claude_corpus(home: Path) -> Path:
    corpus = bench_import.make_corpus(home, 3.0, seed=3, partial=0.3)
    root = corpus.root
    files = sorted(root.rglob("*.jsonl"))
    assert len(files) > 5
    with open(files[1], "ab") as fh:  # odd lines: blank, not JSON, a list, a torn tail
        fh.write(b"\n   \nnot json\n[1, 2]\n")
    with open(files[2], "ab") as fh:
        fh.write(b'{"type": "assistant", "message": {"usage": ')
    return root


def _codex_corpus(home: Path) -> Path:
    root = home / ".codex" / "sessions"
    sample = (SAMPLES / "codex-rollout.jsonl").read_bytes()
    for day in range(6):
        folder = root / "2026" / "12" / f"{day + 1:02}"
        folder.mkdir(parents=True)
        path = folder / f"rollout-2026-12-{day + 1:02}T00-00-00-{day:08x}.jsonl"
        path.write_bytes(sample)
        os.utime(path, (1_790_000_000 + day, 1_790_000_000 + day))  # copies: all but one dupes
    return root.parent


def _append(root: Path, kind: str) -> None:
    """New lines at the end of every log (the next import reads them from the saved offsets)."""
    source = SAMPLES / (
        "codex-rollout.jsonl" if kind == "codex" else "claude-project-session.jsonl"
    )
    extra = source.read_bytes()
    for path in sorted(root.rglob("*.jsonl")):
        data = path.read_bytes()
        cut = data.rfind(b"\n") + 1
        stat = path.stat()
        path.write_bytes(data[:cut] + extra + data[cut:])  # the torn tail stays torn, at the end
        os.utime(path, (stat.st_atime, stat.st_mtime))


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_pool_import_equals_serial(tmp_path: Path, monkeypatch, kind: str) -> None:
    build = _claude_corpus if kind == "claude-code" else _codex_corpus
    results = []
    for workers in (1, 2):
        home = tmp_path / f"w{workers}"
        root = build(home)
        ledger = home / "ledger.jsonl"
        first = _import(root, ledger, kind, workers, monkeypatch)
        _append(root, kind)
        second = _import(root, ledger, kind, workers, monkeypatch)
        results.append((first, second))
    (serial1, serial2), (pool1, pool2) = results
    assert serial1["report"]["calls"] > 0 and serial2["report"]["bytes_read"] > 0
    if kind == "claude-code":
        assert serial1["report"]["duplicates"] > 0 and serial1["report"]["repeats"] > 0
        assert serial1["report"]["unknown"] and serial1["report"]["waiting_lines"] == 1
    else:
        assert serial1["report"]["duplicates"] > 0
    assert pool1 == serial1
    assert pool2 == serial2


def test_small_imports_stay_serial(tmp_path: Path, monkeypatch) -> None:
    """Below POOL_BYTES of new bytes no worker is started (they cost more than they save)."""
    monkeypatch.setenv("ELOLEDGER_IMPORT_WORKERS", "2")
    root = _codex_corpus(tmp_path)
    report = importer.import_logs("codex", [root], tmp_path / "a.jsonl", settle_s=0.0)
    assert report.calls > 0 and report.plan.workers == 1
    monkeypatch.setattr(importplan, "POOL_BYTES", 0)
    report = importer.import_logs("codex", [root], tmp_path / "b.jsonl", settle_s=0.0)
    assert report.calls > 0 and report.plan.workers == 2
