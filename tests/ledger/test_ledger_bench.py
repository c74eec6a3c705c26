"""Smoke test: the ledger benchmark runs on a small file and finds identical sums."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_ledger.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_bench_ledger_small() -> None:
    done = _bench("--rows", "3000", "--no-json-loop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sums identical: True" in done.stdout
    assert "jq | awk" in done.stdout


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_bench_guide_rows_against_duckdb_small() -> None:
    done = _bench("--guide", "--rows", "3000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sums identical: True" in done.stdout and "duckdb" in done.stdout


def test_bench_colliding_ids_small() -> None:
    done = _bench("--collide", "--rows", "300")
    assert "colliding / ordinary:" in done.stdout, done.stdout + done.stderr


def test_bench_growing_ledger_small() -> None:
    """30,000 rows (about 10 MB: over the cache's floor), two rounds of appended rows: the
    cached read and the whole read give the same sums."""
    done = _bench("--append", "2", "--rows", "30000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sums identical (whole, cached): True" in done.stdout
    assert done.stdout.count("\n") >= 5  # the header, two rounds, the summary


def test_bench_folder_of_small_ledgers_small() -> None:
    """Forty small ledgers: both runs, and the same sums as DuckDB's read of the glob."""
    done = _bench("--folder", "40")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sums identical: True" in done.stdout and done.stdout.count("\n") >= 5


def test_bench_memory_shapes_small() -> None:
    """Every shape runs the CLI at both sizes, the imported Claude Code log included."""
    done = _bench("--guide-memory", "2", "--rows", "2000")
    assert "peak" in done.stdout, done.stdout + done.stderr
    for shape in ("one file, no ts", "two shards, no ts", "one file, unordered ts", "imported log"):
        assert done.stdout.count(shape) == 2, done.stdout


def test_the_imported_log_has_the_importers_fields_and_no_order(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH.parent))
    try:
        import bench_ledger

        path = tmp_path / "imported.jsonl"
        bench_ledger.generate_imported(path, 5000, tmp_path)
    finally:
        sys.path.remove(str(BENCH.parent))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 5000 and len({r["dedupe_key"] for r in rows}) == 5000
    assert rows[0]["source"] == "claude-code" and rows[0]["usage_source"] == "log"
    stamps = [r["ts"] for r in rows]
    assert any(b < a for a, b in zip(stamps, stamps[1:], strict=False))  # sessions interleave
    assert not list(tmp_path.glob("import-home*"))  # the corpus is gone


def test_bench_engine_floor_small() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH.parent / "bench_engine_floor.py"), "--rows", "3000",
         "--repeat", "1"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "floor" in done.stdout and "(1.00x)" in done.stdout


def test_the_engine_floors_checks_refuse_what_duckdbs_typed_read_takes(tmp_path: Path) -> None:
    """A number written as text and a bool where a count belongs: DuckDB's typed read takes
    both as numbers; the strict query counts them, and msgspec's exact types refuse them."""
    import duckdb
    import msgspec

    sys.path.insert(0, str(BENCH.parent))
    try:
        import bench_engine_floor as floor
    finally:
        sys.path.remove(str(BENCH.parent))
    path = tmp_path / "odd.jsonl"
    rows = [{"arm": "a", "sample": "5", "total_tokens": 3}, {"arm": "a", "total_tokens": True}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lax = duckdb.sql(floor.DUCKDB_TYPED_SQL.format(path=path)).fetchall()
    assert lax[0][1] == 4  # 3 + true: taken as numbers
    ((_, _, count, _, wrong),) = duckdb.sql(floor.strict_duckdb_sql(path)).fetchall()
    assert (count, wrong) == (2, 2)
    with pytest.raises(msgspec.ValidationError):
        floor.typed_lines(str(path), 0, path.stat().st_size)
