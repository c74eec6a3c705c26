"""Benchmark: the least a strict reader built on DuckDB would cost, against DuckDB's plain query.

    .venv/bin/python bench/bench_engine_floor.py            # 1M of the guides' rows, three runs

``tokens`` on the guides' rows (``bench_ledger.py --guide``) is several times DuckDB's plain
``read_json`` + GROUP BY. DuckDB told the fields' types, counting the rows' distinct field
tuples (the duplicate rule's cheap half), is about as fast as the plain query. But DuckDB's
typed read is lax where eloledger is strict (``"5"`` and ``true`` read as numbers, an object as
text, ``NaN`` and a trailing comma accepted, blank lines skipped), so an engine built on it
must check the strict rules too. This prints, side by side in each run, the two ways to check:

* DuckDB reading the fields as JSON and counting values of the wrong JSON type (one query);
* msgspec decoding each line into the fields' exact types (what eloledger's fast path checks),
  in two processes, beside DuckDB's typed query (two passes: their sum is the floor).

Neither includes the tally's own rules (status from ``error``, usage, the evidence lines).
"""

from __future__ import annotations

import argparse
import mmap
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import msgspec

from bench_ledger import DUCKDB_SQL, DUCKDB_TYPED_SQL, GUIDE_TYPES, _load, generate_guide

FIELDS = tuple(GUIDE_TYPES)
NUMBERS = tuple(name for name, kind in GUIDE_TYPES.items() if kind == "BIGINT")


def strict_duckdb_sql(path: Path) -> str:
    """The fields read as JSON: the sums, the distinct rows, and the values of a wrong type."""
    columns = "{" + ", ".join(f"'{f}': 'JSON'" for f in FIELDS) + "}"
    wrong = " + ".join(
        f"count_if({f} is not null and json_type({f}) not in "
        + ("('BIGINT', 'UBIGINT', 'DOUBLE', 'NULL'))" if f in NUMBERS else "('VARCHAR', 'NULL'))")
        for f in FIELDS
    )
    return (
        f"select arm::varchar, sum(total_tokens::double), count(*), count(distinct hash("
        f"{', '.join(FIELDS)})), {wrong} from read_json('{path}', format='newline_delimited', "
        f"columns={columns}) group by arm"
    )


class GuideRow(msgspec.Struct, gc=False):
    """The fields with the types eloledger's tight decoder accepts (others fail)."""

    run_id: str | None = None
    task_id: str | None = None
    arm: str | None = None
    sample: int | None = None
    model: str | None = None
    prompt_tokens: float | None = None
    completion_tokens: float | None = None
    total_tokens: float | None = None
    error: str | None = None


def typed_lines(path: str, start: int, end: int) -> int:
    """Decode ``[start, end)`` (whole lines) 2 MB at a time; the number of rows."""
    decoder = msgspec.json.Decoder(GuideRow)
    rows = 0
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        pos = start
        while pos < end:
            stop = data.find(b"\n", min(pos + (2 << 20), end) - 1, end) + 1 or end
            rows += len(decoder.decode_lines(data[pos:stop]))
            pos = stop
    return rows


def msgspec_check(path: Path) -> int:
    """:func:`typed_lines` over the file in two processes."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(size // 2)
        fh.readline()
        middle = fh.tell()
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        other = pool.submit(typed_lines, str(path), middle, size)
        return typed_lines(str(path), 0, middle) + other.result()


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "guide.jsonl"
        generate_guide([path], args.rows)
        path.read_bytes()  # warm the page cache
        print(f"guide's rows, no ts: {args.rows:,} rows, {path.stat().st_size / 1e6:,.0f} MB; "
              f"{os.cpu_count()} CPUs; {_load()}")  # fmt: skip
        contenders = {  # (short names: the table fits 80 columns)
            "plain": lambda: duckdb.sql(DUCKDB_SQL.format(path=path)).fetchall(),
            "typed+distinct": lambda: duckdb.sql(DUCKDB_TYPED_SQL.format(path=path)).fetchall(),
            "JSON+types": lambda: duckdb.sql(strict_duckdb_sql(path)).fetchall(),
            "msgspec x2": lambda: msgspec_check(path),
        }
        print("DuckDB: plain read_json + GROUP BY; typed+distinct: told the types, counting")
        print("distinct rows; JSON+types: the fields as JSON, wrong JSON types counted;")
        print("msgspec x2: each line decoded to the exact types in two processes;")
        print("floor = typed+distinct + msgspec x2. Seconds (x the same run's plain query):")
        print(f"{'run':>3} " + " ".join(f"{name:>15}" for name in contenders) + f" {'floor':>8}")
        for run in range(args.repeat):
            times = {name: timed(go) for name, go in contenders.items()}
            plain = times["plain"]
            floor = times["typed+distinct"] + times["msgspec x2"]
            cells = " ".join(f"{t:6.3f} ({t / plain:4.2f}x)" for t in times.values())
            print(f"{run + 1:>3} {cells} {floor / plain:7.2f}x")
    print(f"(x: the same run's plain DuckDB query); after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
