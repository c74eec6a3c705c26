"""Benchmark: summarise a token ledger by arm, eloledger vs the `jq | awk` pipeline.

Generates a realistic ledger (default 1,000,000 rows, ~25 fields, answer text in each row) in a
temporary folder, then times on the same file, side by side in one run:

* eloledger: what ``tokens --by arm`` does, in process (``ledger.tally.read_tally``: the file
  folded batch by batch in worker slices, groups and warnings), and the whole CLI
  ``python -m eloledger tokens LEDGER --format json`` (interpreter start included);
* the pipeline the popular guides use:
  ``jq -r '[.arm, .total_tokens] | @tsv' ledger.jsonl | awk '{s[$1]+=$2} END {...}'``;
* a plain Python ``json.loads`` loop, for context.

The data has null tokens on failed calls and no judge rows, so the guide's pipeline and
eloledger's rules give the same sums; the script checks that they are identical.

    .venv/bin/python bench/bench_ledger.py            # 1,000,000 rows, the guides' names
    .venv/bin/python bench/bench_ledger.py --rows 20000
    .venv/bin/python bench/bench_ledger.py --dupes   # the duplicate check alone, new vs old
    .venv/bin/python bench/bench_ledger.py --memory 4          # peak memory, 1M and 4M rows
    .venv/bin/python bench/bench_ledger.py --outcomes --rows 128000  # elo --ledger's reader
    .venv/bin/python bench/bench_ledger.py --guide          # the guide's rows (no ts) vs DuckDB
    .venv/bin/python bench/bench_ledger.py --guide-memory 4  # peak memory: 3 shapes, imported log
    .venv/bin/python bench/bench_ledger.py --collide --rows 80000  # hash-flooding task_ids

``--guide`` and ``--guide-memory`` use the field set the Elo-per-token guides' ledgers carry
(run_id, task_id, arm, sample, model, the three token counts, an error on failed calls, the
answer text; no ``ts``, ~266 bytes a row) and compare with DuckDB (``pip install -e
'.[bench]'``) as well as jq|awk.

``--dupes`` times ``ledger.merge._find_duplicates`` against the line-by-line check it replaced
(kept below as ``old_find_duplicates``, the named baseline) on two shards, the same ledger
twice (``cat L L``) and one ledger whose rows carry no timestamps, checking both agree.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import orjson

ARMS = ("single", "best_of_4", "best_of_8", "self_consistency_5", "tree_search_16")
WORDS = [
    *[
        "the",
        "answer",
        "is",
        "therefore",
        "we",
        "compute",
        "sum",
        "of",
        "all",
        "values",
        "and",
        "return",
        "result",
    ],
    *[
        "carefully",
        "first",
        "check",
        "edge",
        "cases",
        "then",
        "write",
        "tests",
        "because",
        "correctness",
        "matters",
    ],
]
JQ_AWK = (
    "jq -r '[.arm, .total_tokens] | @tsv' {path} | "
    "awk '{{s[$1]+=$2}} END {{for (a in s) printf \"%s %.0f\\n\", a, s[a]}}'"
)


GUIDE_NAMES = {
    "arm": "strategy",
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
}


# What ``--shape short`` leaves out: rows of ~330 bytes (no answer text, no request settings),
# the size of the 1M-row, 266 MB ledger the issue measured.
SHORT_DROPS = (
    "content", "base_url", "profile", "wire_api", "ttft_ms", "max_tokens", "temperature",
    "finish_reason", "score", "passed", "reasoning_tokens", "cached_tokens", "experiment",
)  # fmt: skip


def generate(
    path: Path, rows: int, seed: int = 7, names: str = "canonical", shape: str = "full"
) -> None:
    """Rows shaped like the runner's: ok rows with usage, ~3% failed calls without usage.

    ``names="guide"``: the field names the popular guides use (strategy, input_tokens, ...).
    ``shape="short"``: without the fields in :data:`SHORT_DROPS` (~330 bytes a row, not ~770).
    """
    rng = np.random.default_rng(seed)
    prompt = rng.integers(50, 2000, rows)
    completion = rng.integers(1, 1500, rows)
    failed = rng.random(rows) < 0.03
    tasks = rng.integers(0, 1000, rows)
    roles = np.where(rng.random(rows) < 0.9, "sample", "select")
    latency = rng.uniform(100, 5000, rows).round(1)
    n_words = rng.integers(5, 60, rows)
    words = rng.integers(0, len(WORDS), (rows, 60))
    with open(path, "wb") as fh:
        batch = []
        for i in range(rows):
            row = {
                "v": 1,
                "run_id": "run-20261129-a1b2",
                "experiment": "bench",
                "task_id": f"task-{tasks[i]:04d}",
                "arm": ARMS[i % len(ARMS)],
                "session": f"s{i % 8}",
                "sample": int(i % 16),
                "round": 0,
                "role": str(roles[i]),
                "model": "gpt-x-mini",
                "profile": "local",
                "base_url": "http://127.0.0.1:8000/v1",
                "wire_api": "chat",
                "latency_ms": float(latency[i]),
                "ttft_ms": float(latency[i] / 10),
                "attempt": 0,
                "max_tokens": 2048,
                "temperature": 0.7,
                "ts": 1764400000.0 + i * 0.01,
            }
            if failed[i]:
                row.update(
                    status="error",
                    error_class="RateLimitError",
                    error="429 too many requests",
                    http_status=429,
                    usage_source="missing",
                    prompt_tokens=None,
                    completion_tokens=None,
                    total_tokens=None,
                )
            else:
                p, c = int(prompt[i]), int(completion[i])
                row.update(
                    status="ok",
                    http_status=200,
                    usage_source="server",
                    prompt_tokens=p,
                    completion_tokens=c,
                    total_tokens=p + c,
                    reasoning_tokens=c // 3,
                    cached_tokens=0,
                    finish_reason="stop",
                    content=" ".join(WORDS[w] for w in words[i, : n_words[i]]),
                    score=round(float(p % 100) / 100, 2),
                    passed=bool(p % 2),
                )
            if shape == "short":
                row = {k: v for k, v in row.items() if k not in SHORT_DROPS}
            if names == "guide":
                row = {GUIDE_NAMES.get(k, k): v for k, v in row.items()}
            batch.append(orjson.dumps(row))
            if len(batch) == 20000:
                fh.write(b"\n".join(batch) + b"\n")
                batch = []
        if batch:
            fh.write(b"\n".join(batch) + b"\n")


def run_eloledger(path: Path) -> tuple[float, dict[str, int]]:
    """What ``tokens --by arm`` does, in process: the streamed tally (or the whole-file read
    with the duplicate check, when the ledger needs it), the groups and every warning."""
    from eloledger.ledger.columns import SUMMARY_COLUMNS
    from eloledger.ledger.tally import read_tally

    start = time.perf_counter()
    tally, _ = read_tally(path, (*SUMMARY_COLUMNS, "latency_ms", "ts"), "arm", None)
    groups = tally.groups()
    tally.judge_summary()
    elapsed = time.perf_counter() - start
    return elapsed, {g["name"]: int(g["total_tokens"]) for g in groups}


def peak_rss(command: list[str] | str, *, shell: bool = False) -> tuple[float, int, bytes]:
    """(seconds, peak resident bytes of the process tree summed, stdout): sampled every 20 ms
    with psutil, workers included (a forked worker counts in full, shared pages too)."""
    import threading

    import psutil

    start = time.perf_counter()
    proc = subprocess.Popen(command, shell=shell, stdout=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                peak[0] = max(peak[0], sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                pass
            done.wait(0.02)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    watcher.join()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, command)
    return elapsed, peak[0], out


# The command, reading each ledger whole: a tally kept from an earlier run would time the
# cache, not the reader (bench_append times the cache, beside this).
TOKENS_CLI = [sys.executable, "-m", "eloledger", "tokens", "--no-cache"]


def run_cli(path: Path) -> tuple[float, dict[str, int]]:
    """The whole CLI, timed alone (sampling its memory would take CPU from it)."""
    start = time.perf_counter()
    done = subprocess.run(
        [*TOKENS_CLI, str(path), "--format", "json"],
        capture_output=True,
        check=True,
    )
    elapsed = time.perf_counter() - start
    groups = json.loads(done.stdout)["groups"]
    return elapsed, {g["name"]: int(g["total_tokens"]) for g in groups}


def cli_with_memory(path: Path) -> tuple[float, int, bytes]:
    command = [*TOKENS_CLI, str(path), "--format", "json"]
    return peak_rss(command)


def run_jq_awk(path: Path, arm: str = "arm") -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    done = subprocess.run(
        JQ_AWK.format(path=path).replace(".arm,", f".{arm},"),
        shell=True,
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed = time.perf_counter() - start
    sums = {}
    for line in done.stdout.splitlines():
        arm, total = line.split()
        sums[arm] = int(total)
    return elapsed, sums


def run_json_loop(path: Path) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    sums: dict[str, int] = defaultdict(int)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            sums[row.get("arm") or row["strategy"]] += row.get("total_tokens") or 0
    return time.perf_counter() - start, dict(sums)


def old_find_duplicates(parts: list) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """The baseline: the check as it once was (one orjson parse + digest per row)."""
    from eloledger.ledger.dedupe import DuplicateFinder
    from eloledger.ledger.merge import _loads
    from eloledger.ledger.reader import _numbered_lines, _read_bytes

    finder = DuplicateFinder()
    keep: list[bool] = []
    for part in parts:
        data = _read_bytes(part.path, part.end_offset)
        for number, line in _numbered_lines(data):
            where = f"{part.path}:{number}"
            row = _loads(line, where)
            keep.append(finder.repeats(where, line, row, str(part.path)) is None)
    return np.array(keep, dtype=bool), finder.pairs


def bench_dupes(folder: Path, rows: int, repeat: int) -> int:
    """The duplicate check alone: new (bulk) vs old (line by line), same parts, same answer."""
    from eloledger.ledger.columns import SUMMARY_COLUMNS
    from eloledger.ledger.merge import _find_duplicates
    from eloledger.ledger.reader import read_ledger

    half = rows // 2
    shards = [folder / "shard-0.jsonl", folder / "shard-1.jsonl"]
    generate(shards[0], half, seed=7)
    generate(folder / "other.jsonl", rows - half, seed=8)
    with open(folder / "other.jsonl", "rb") as src, open(shards[1], "wb") as out:
        for line in src:  # the other shard's tasks (shards split a run by task)
            out.write(line.replace(b'"task_id":"task-', b'"task_id":"task-b'))
    stamped = folder / "no-ts.jsonl"
    with open(shards[0], "rb") as src, open(stamped, "wb") as out:
        for line in src:
            row = orjson.loads(line)
            row.pop("ts", None)
            out.write(orjson.dumps(row) + b"\n")
    cases = {
        "two shards": shards,
        "a shard twice": [shards[0], shards[1], shards[0]],
        "cat L L": [shards[0], shards[0]],
        "one file, no ts": [stamped],
    }
    want = (*SUMMARY_COLUMNS, "ts")
    print(f"duplicate check, {rows:,} rows in all; best of {repeat}")
    print(f"{'case':18} {'rows':>9} {'dups':>9} {'old s':>8} {'new s':>8} {'new/old':>8}")
    same = True
    for name, paths in cases.items():
        parts = [read_ledger(p, columns=want) for p in paths]
        timings = {}
        answers = {}
        for label, check in (("old", old_find_duplicates), ("new", _find_duplicates)):
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                answers[label] = check(parts)
                best = min(best, time.perf_counter() - start)
            timings[label] = best
        (keep_old, pairs_old), (keep_new, pairs_new) = answers["old"], answers["new"]
        agree = keep_old.tolist() == keep_new.tolist() and pairs_old == pairs_new
        same &= agree
        print(
            f"{name:18} {len(keep_old):9,} {len(pairs_old):9,} {timings['old']:8.3f} "
            f"{timings['new']:8.3f} {timings['new'] / timings['old']:8.3f}"
            + ("" if agree else "  DIFFERENT ANSWERS")
        )
    print(f"identical keep-masks and pairs: {same}")
    return 0 if same else 1


def memory_rows(folder: Path, rows: int, names: str, scale: int) -> bool:
    """Peak memory of ``tokens`` (the CLI, workers included) at ``rows`` and ``scale`` x rows:
    flat when the summary keeps groups, not rows. jq's beside it, on the smaller file."""
    print(f"peak memory of the tokens CLI (process tree, sampled every 20 ms); {_load()}")
    print(f"{'rows':>11} {'MB file':>9} {'seconds':>8} {'peak MB':>8}")
    peaks = []
    for count in (rows, rows * scale):
        path = folder / f"ledger-{count}.jsonl"
        generate(path, count, names=names)
        path.read_bytes()
        seconds, peak, _ = cli_with_memory(path)
        peaks.append(peak)
        print(f"{count:11,} {path.stat().st_size / 1e6:9,.0f} {seconds:8.2f} {peak / 1e6:8.0f}")
        if count == rows:
            arm = GUIDE_NAMES["arm"] if names == "guide" else "arm"
            jq_seconds, jq_peak, _ = peak_rss(
                JQ_AWK.format(path=path).replace(".arm,", f".{arm},"), shell=True
            )
            print(f"{'(jq | awk)':>11} {'':9} {jq_seconds:8.2f} {jq_peak / 1e6:8.0f}")
        path.unlink()
    growth = peaks[1] / peaks[0]
    ok = max(peaks) <= 256e6 and growth < 1.25
    print(
        f"peak {max(peaks) / 1e6:.0f} MB (goal <= 256), x{growth:.2f} from {rows:,} to "
        f"{rows * scale:,} rows (goal: flat): {'met' if ok else 'NOT met'}"
    )
    return ok


def bench_outcomes(folder: Path, rows: int, repeat: int) -> int:
    """``elo --ledger``'s reader (budget.outcomes.ledger_outcomes): the columnar path vs the
    row-by-row path it once was (canonical rows + the line-by-line duplicate finder)."""
    from eloledger.budget.files import load_rows
    from eloledger.budget.outcomes import arm_outcomes, ledger_outcomes, ledger_results
    from eloledger.ledger.merge import read_ledgers
    from eloledger.ledger.summary import TOKEN_COUNT_COLUMNS, count_warnings

    def row_path(ledger: Path) -> tuple[dict, list[str]]:
        found, warnings = load_rows(ledger)
        outcomes, more = arm_outcomes(found, results=ledger_results(ledger))
        counts = count_warnings(read_ledgers(ledger, columns=TOKEN_COUNT_COLUMNS))
        return outcomes, [*warnings, *counts, *more]

    path = folder / "ledger.jsonl"
    generate(path, rows)
    print(f"elo --ledger outcomes, {rows:,} rows; best of {repeat}; {_load()}")
    times, cpus, answers = {}, {}, {}
    for _ in range(repeat):
        for label, run in (("columnar", ledger_outcomes), ("row path", row_path)):
            start, cpu = time.perf_counter(), time.process_time()
            answers[label] = run(path)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            times[label] = min(times.get(label, seconds), seconds)
            cpus[label] = min(cpus.get(label, cpu), cpu)
    agree = answers["columnar"] == answers["row path"]
    print(
        f"columnar {times['columnar']:.2f} s ({cpus['columnar']:.2f} s cpu), row path "
        f"{times['row path']:.2f} s ({cpus['row path']:.2f} s cpu): ratio "
        f"{times['columnar'] / times['row path']:.3f} wall, "
        f"{cpus['columnar'] / cpus['row path']:.3f} cpu; identical outcomes and warnings: "
        f"{agree}; after: {_load()}"
    )
    return 0 if agree else 1


# --- the guides' own ledger (no ts) against DuckDB -----------------------------------------------

GUIDE_MODELS = ("gpt-x-mini", "gpt-x", "claude-y")
DUCKDB_SQL = (
    "select arm, sum(total_tokens) as total from read_json('{path}', "
    "format='newline_delimited') group by arm"
)

# The same query with the work eloledger's duplicate rule needs: each line read as text and
# hashed (the key of "a line seen before"), the typed fields decoded from it. What DuckDB itself
# costs when it must do what the reader does, beside what it costs when it need not.
DUCKDB_LINES_SQL = (
    "select r.arm, sum(r.total_tokens), count(distinct h) from (select hash(line) as h, "
    'json_transform(line, \'{{"arm": "VARCHAR", "total_tokens": "BIGINT", '
    '"task_id": "VARCHAR", "sample": "BIGINT", "error": "VARCHAR"}}\') as r '
    "from read_csv('{path}', columns={{'line': 'VARCHAR'}}, delim='\\x01', quote='', "
    "escape='', header=false, auto_detect=false)) group by r.arm"
)

# What DuckDB as eloledger's engine could reach: the fields the tally reads, typed up front (no
# schema sniffing, the answer text never materialised), and the duplicate rule's cheap half:
# lines that are byte for byte the same have the same fields, so rows whose fields are all
# distinct (the count below equals the row count) repeat nothing, and only a file where they
# do not would need the lines' bytes. Not what eloledger does: DuckDB's typed read is lax
# (it takes "5" and true as numbers, an object as text, NaN and a trailing comma, and skips
# blank lines), so an engine built on it would still need the strict rules checked apart.
GUIDE_TYPES = {"run_id": "VARCHAR", "task_id": "VARCHAR", "arm": "VARCHAR", "sample": "BIGINT",
               "model": "VARCHAR", "prompt_tokens": "BIGINT", "completion_tokens": "BIGINT",
               "total_tokens": "BIGINT", "error": "VARCHAR"}  # fmt: skip
DUCKDB_TYPED_SQL = (
    f"select arm, sum(total_tokens), count(*), count(distinct hash({', '.join(GUIDE_TYPES)})) "
    "from read_json('{path}', format='newline_delimited', columns={{"
    + ", ".join(f"'{name}': '{kind}'" for name, kind in GUIDE_TYPES.items())
    + "}}) group by arm"
)


def generate_guide(
    paths: list[Path], rows: int, seed: int = 11, ts: str = "none", overlap: int = 0
) -> None:
    """The guides' rows (~266 bytes each): ``paths`` get consecutive shares of ``rows``.

    ``ts="none"``: no timestamp (the guides write none); ``"unordered"``: shuffled timestamps
    with every tenth one repeated. ``overlap``: rows the second shard repeats from the first
    (overlapping shards: counted once, with a warning).
    """
    rng = np.random.default_rng(seed)
    prompt = rng.integers(50, 2000, rows)
    completion = rng.integers(1, 1500, rows)
    failed = rng.random(rows) < 0.03
    n_words = rng.integers(8, 25, rows)
    words = rng.integers(0, len(WORDS), (rows, 26))
    stamps = 1764400000.0 + rng.permutation(rows) * 0.01
    stamps[::10] = stamps[1::10][: len(stamps[::10])] if rows > 1 else stamps[::10]
    share = -(-rows // len(paths))
    lines: list[bytes] = []
    for i in range(rows):
        row: dict = {
            "run_id": "run-20261129-a1b2",
            "task_id": f"task-{i // (len(ARMS) * 16):05d}",  # one row per task, arm, sample
            "arm": ARMS[i % len(ARMS)],
            "sample": int(i // len(ARMS) % 16),
            "model": GUIDE_MODELS[i % len(GUIDE_MODELS)],
        }
        if ts == "unordered":
            row["ts"] = float(stamps[i])
        if failed[i]:
            row.update(
                prompt_tokens=None,
                completion_tokens=None,
                total_tokens=None,
                error="429 too many requests",
            )
        else:
            p, c = int(prompt[i]), int(completion[i])
            row.update(prompt_tokens=p, completion_tokens=c, total_tokens=p + c)
            row["answer"] = " ".join(WORDS[w] for w in words[i, : n_words[i]])
        lines.append(orjson.dumps(row))
    for k, path in enumerate(paths):
        part = lines[k * share : (k + 1) * share]
        if k == 1 and overlap:
            part = lines[share - overlap : share] + part
        with open(path, "wb") as fh:
            for at in range(0, len(part), 20000):
                fh.write(b"\n".join(part[at : at + 20000]) + b"\n")


def run_duckdb(path: Path) -> tuple[float, dict[str, int]]:
    """DuckDB's newline-delimited JSON reader and GROUP BY, in process (imported beforehand)."""
    import duckdb

    start = time.perf_counter()
    found = duckdb.sql(DUCKDB_SQL.format(path=path)).fetchall()
    elapsed = time.perf_counter() - start
    return elapsed, {arm: int(total) for arm, total in found}


def run_duckdb_lines(path: Path) -> tuple[float, dict[str, int]]:
    """DuckDB doing the duplicate rule's share of the work too (:data:`DUCKDB_LINES_SQL`)."""
    import duckdb

    start = time.perf_counter()
    found = duckdb.sql(DUCKDB_LINES_SQL.format(path=path)).fetchall()
    elapsed = time.perf_counter() - start
    return elapsed, {arm: int(total) for arm, total, _ in found}


def run_duckdb_typed(path: Path) -> tuple[float, dict[str, int]]:
    """DuckDB told the fields and their types, with the rows' distinct count
    (:data:`DUCKDB_TYPED_SQL`)."""
    import duckdb

    start = time.perf_counter()
    found = duckdb.sql(DUCKDB_TYPED_SQL.format(path=path)).fetchall()
    elapsed = time.perf_counter() - start
    return elapsed, {arm: int(total) for arm, total, _, _ in found}


def bench_guide(folder: Path, rows: int, repeat: int) -> int:
    """``tokens --by arm`` on the guides' rows: eloledger in process and as the CLI, DuckDB,
    jq|awk, interleaved ``repeat`` times; ratios against DuckDB and jq|awk."""
    import duckdb  # noqa: F401  (imported once, outside the timing)

    path = folder / "guide.jsonl"
    generate_guide([path], rows)
    path.read_bytes()  # warm the page cache
    print(
        f"guide's rows, no ts: {rows:,} rows, {path.stat().st_size / 1e6:,.0f} MB; "
        f"{os.cpu_count()} CPUs; {_load()}"
    )
    contenders = {
        "eloledger (in process)": run_eloledger,
        "eloledger tokens (CLI)": run_cli,
        "duckdb read_json+group": run_duckdb,
        "duckdb lines hashed": run_duckdb_lines,
        "duckdb typed, distinct": run_duckdb_typed,
        "jq | awk": run_jq_awk,
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    answers = {}
    for _ in range(repeat):
        for name, run in contenders.items():
            seconds, sums = run(path)
            times[name].append(seconds)
            answers[name] = sums
    same = all(a == answers["duckdb read_json+group"] for a in answers.values())
    duck, jq = times["duckdb read_json+group"], times["jq | awk"]
    print(f"{'contender':24} " + " ".join(f"{'run ' + str(i + 1):>8}" for i in range(repeat))
          + f" {'x duckdb':>9} {'x jq|awk':>9}")  # fmt: skip
    for name, runs in times.items():
        worst = max(r / d for r, d in zip(runs, duck, strict=True))
        worst_jq = max(r / j for r, j in zip(runs, jq, strict=True))
        print(
            f"{name:24} " + " ".join(f"{r:8.3f}" for r in runs) + f" {worst:9.2f} {worst_jq:9.2f}"
        )
    print("(x duckdb, x jq|awk: the worst run's ratio to the same run's baseline)")
    print(f"sums identical: {same}; after: {_load()}")
    return 0 if same else 1


def generate_imported(path: Path, rows: int, folder: Path) -> None:
    """Claude Code calls as ``eloledger import claude-code`` writes them: a small corpus of
    session logs (``bench_import``'s generator) imported for real, then its rows repeated with
    fresh sessions, call ids and timestamps up to ``rows``. The importer's fields, in its
    order; timestamps rise within a session and fall back between sessions (no order overall)."""
    from bench_import import make_corpus

    with tempfile.TemporaryDirectory(dir=folder, prefix="import-home") as home:
        template = Path(home) / "imported.jsonl"  # (with the import's state file beside it)
        make_corpus(Path(home), 2, seed=7, partial=0.0)
        command = [sys.executable, "-m", "eloledger", "import", "claude-code", "-o", str(template)]
        env = {**os.environ, "HOME": home}
        subprocess.run([*command, "--settle", "0", "--no-progress"], env=env, check=True,
                       capture_output=True)  # fmt: skip
        base = [orjson.loads(line) for line in template.read_bytes().splitlines()]
    with open(path, "wb") as fh:
        for start in range(0, rows, 20000):
            lines = []
            for i in range(start, min(start + 20000, rows)):
                copy, row = divmod(i, len(base))
                call = dict(base[row])
                call["session"] = f"{call['session']}-{copy}"
                call["ts"] = call["ts"] + copy * 0.5
                for key in ("call_id", "dedupe_key"):
                    call[key] = f"{call[key]}-{copy}"
                lines.append(orjson.dumps(call))
            fh.write(b"\n".join(lines) + b"\n")


def guide_memory(folder: Path, rows: int, scale: int) -> int:
    """Peak memory of the ``tokens`` CLI (process tree) at ``rows`` and ``scale`` x ``rows``:
    the guides' rows in one file without ts, in two shards (a hundredth of the rows repeated
    in both), in one file with shuffled and repeated ts; and an imported Claude Code log."""
    print(f"peak memory of the tokens CLI on the guides' rows (sampled every 20 ms); {_load()}")
    print(f"{'shape':28} {'rows':>11} {'MB files':>9} {'seconds':>8} {'peak MB':>8}")
    worst, flat = 0, True
    shapes = ("one file, no ts", "two shards, no ts", "one file, unordered ts", "imported log")
    for shape in shapes:
        peaks = []
        for count in (rows, rows * scale):
            if shape == "imported log":
                paths = [folder / "imported.jsonl"]
                generate_imported(paths[0], count, folder)
            elif shape.startswith("two"):
                paths = [folder / "shard-0.jsonl", folder / "shard-1.jsonl"]
                generate_guide(paths, count, overlap=count // 100)
            else:
                paths = [folder / "guide.jsonl"]
                generate_guide(paths, count, ts="unordered" if "unordered" in shape else "none")
            size = sum(p.stat().st_size for p in paths)
            command = [*TOKENS_CLI, *map(str, paths)]
            seconds, peak, _ = peak_rss([*command, "--format", "json"])
            peaks.append(peak)
            print(f"{shape:28} {count:11,} {size / 1e6:9,.0f} {seconds:8.2f} {peak / 1e6:8.0f}")
            for p in paths:
                p.unlink()
        worst = max(worst, *peaks)
        flat = flat and peaks[1] / peaks[0] < 1.25
    ok = worst <= 256e6 and flat
    print(f"peak {worst / 1e6:.0f} MB (goal <= 256, flat): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def bench_folder(folder: Path, files: int, rows_each: int = 50) -> int:
    """``tokens --by arm`` on a folder of ``files`` small ledgers of the guides' rows (one per
    task's shard, ``rows_each`` rows each) against DuckDB's ``read_json`` of the folder's
    glob, alternating, twice; the sums must be identical."""
    import duckdb  # noqa: F401  (imported once, outside the timing)

    whole = folder / "whole.jsonl"
    generate_guide([whole], files * rows_each)
    lines = whole.read_bytes().splitlines(keepends=True)
    whole.unlink()
    shards = folder / "shards"
    shards.mkdir()
    for k in range(files):
        (shards / f"s{k:05d}.jsonl").write_bytes(
            b"".join(lines[k * rows_each : (k + 1) * rows_each])
        )
    size = sum(p.stat().st_size for p in shards.iterdir())
    print(f"a folder of {files:,} ledgers of {rows_each} guide rows, {size / 1e6:,.0f} MB; "
          f"{os.cpu_count()} CPUs; {_load()}")  # fmt: skip
    print(f"{'run':>4} {'eloledger (CLI)':>16} {'duckdb':>8} {'x duckdb':>9}")
    same, worst = True, 0.0
    for number in (1, 2):
        seconds, ours = run_cli(shards)
        theirs_seconds, theirs = run_duckdb(Path(f"{shards}/*.jsonl"))
        same = same and ours == theirs
        worst = max(worst, seconds / theirs_seconds)
        print(f"{number:>4} {seconds:16.3f} {theirs_seconds:8.3f} {seconds / theirs_seconds:9.2f}")
    print(f"sums identical: {same}; worst x duckdb {worst:.2f}; after: {_load()}")
    return 0 if same else 1


def bench_append(folder: Path, rows: int, rounds: int) -> int:
    """``tokens`` on a ledger a run is still writing: eloledger's own rows (strictly increasing
    ``ts``), 1,000 rows appended before each round. Each round reads the grown file whole
    (``--no-cache``), from the tally the cache folder kept (only the appended bytes folded),
    and with DuckDB; the sums of both eloledger reads must be identical."""
    import duckdb  # noqa: F401  (imported once, outside the timing)

    path = folder / "ledger.jsonl"
    generate(path, rows, shape="short")
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache")}

    def tokens(*flags: str) -> tuple[float, dict[str, int]]:
        command = [sys.executable, "-m", "eloledger", "tokens", str(path), "--format", "json"]
        start = time.perf_counter()
        done = subprocess.run([*command, *flags], env=env, capture_output=True, check=True)
        elapsed = time.perf_counter() - start
        return elapsed, {
            g["name"]: int(g["total_tokens"]) for g in json.loads(done.stdout)["groups"]
        }

    first, _ = tokens()  # reads whole and keeps the tally
    print(f"eloledger's rows, in writing order: {rows:,} rows, {path.stat().st_size / 1e6:,.0f} "
          f"MB; first read (keeps its tally): {first:.3f} s; {os.cpu_count()} CPUs; {_load()}")  # fmt: skip
    print(f"{'round':>5} {'whole':>8} {'cached':>8} {'duckdb':>8} {'cached/duckdb':>14} "
          f"{'cached/whole':>13}")  # fmt: skip
    same, worst = True, 0.0
    for number in range(1, rounds + 1):
        _append_in_order(path, 1000)
        whole, sums = tokens("--no-cache")
        cached, cached_sums = tokens()
        duck, _ = run_duckdb(path)
        same = same and sums == cached_sums
        worst = max(worst, cached / duck)
        print(f"{number:5} {whole:8.3f} {cached:8.3f} {duck:8.3f} {cached / duck:14.2f} "
              f"{cached / whole:13.2f}")  # fmt: skip
    print(f"sums identical (whole, cached): {same}; worst cached/duckdb {worst:.2f}; {_load()}")
    return 0 if same else 1


def _append_in_order(path: Path, count: int) -> None:
    """``count`` more rows like the last ones, each a hundredth of a second after the last."""
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 2_000 * count))
        last = fh.read().splitlines()[-count:]
    stamp = orjson.loads(last[-1])["ts"]
    with open(path, "ab") as fh:
        for k, line in enumerate(last, start=1):
            fh.write(orjson.dumps({**orjson.loads(line), "ts": stamp + k / 100}) + b"\n")


def bench_collide(folder: Path, rows: int) -> int:
    """``tokens --by task`` on ``rows`` task_ids chosen to collide in Python's (unseeded)
    hash of numbers, k * (2**61 - 1), against as many ordinary ones: the same cost (goal: a
    ratio under 1.5)."""
    flood = (1 << 61) - 1
    times = {}
    for name, step in (("ordinary ids", 1_000_003), ("colliding ids", flood)):
        path = folder / f"{name.split()[0]}.jsonl"
        with open(path, "wb") as fh:
            for k in range(1, rows + 1):
                row = {"task_id": k * step, "arm": "a", "sample": 0, "total_tokens": 2}
                fh.write(json.dumps(row).encode() + b"\n")  # (orjson: 64-bit ints only)
        command = [*TOKENS_CLI, str(path), "--by", "task"]
        start = time.perf_counter()
        subprocess.run([*command, "--format", "json"], capture_output=True, check=True)
        times[name] = time.perf_counter() - start
        print(f"{name:14} {rows:,} rows: {times[name]:.2f} s")
    ratio = times["colliding ids"] / times["ordinary ids"]
    print(f"colliding / ordinary: {ratio:.2f} (goal < 1.5); {_load()}")
    return 0 if ratio < 1.5 else 1


def _cpu() -> float:
    """CPU seconds of this process and its finished children (workers, jq, awk): on a loaded
    machine wall time measures the queue, CPU time the work."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs each (default 2)")
    parser.add_argument("--no-json-loop", action="store_true", help="skip the json.loads loop")
    parser.add_argument(
        "--names",
        choices=("canonical", "guide"),
        default="guide",
        help="field names: the guides' (strategy, input_tokens, output_tokens; the default), "
        "or eloledger's",
    )
    parser.add_argument(
        "--shape",
        choices=("full", "short"),
        default="full",
        help="rows of ~770 bytes with answer text (the default), or ~330 bytes without it "
        "(the issue's 266 MB for 1M rows)",
    )
    parser.add_argument(
        "--ledger", type=Path, help="time this ledger file instead of a generated one"
    )
    parser.add_argument(
        "--dupes", action="store_true", help="time the duplicate check alone (new vs old)"
    )
    parser.add_argument(
        "--memory",
        type=int,
        metavar="SCALE",
        default=0,
        help="peak memory of the CLI at --rows and SCALE x --rows (e.g. 4), instead of times",
    )
    parser.add_argument(
        "--outcomes",
        action="store_true",
        help="time elo --ledger's reader (columnar vs row by row) on --rows rows",
    )
    parser.add_argument(
        "--guide", action="store_true", help="the guides' rows (no ts): vs DuckDB and jq|awk"
    )
    parser.add_argument(
        "--guide-memory",
        type=int,
        metavar="SCALE",
        default=0,
        help="peak memory at --rows and SCALE x --rows: the guides' rows, three shapes; an "
        "imported log",
    )
    parser.add_argument(
        "--append",
        type=int,
        metavar="ROUNDS",
        default=0,
        help="tokens on a growing ledger (eloledger's rows, in writing order): whole vs the "
        "cached tally vs DuckDB, 1,000 rows appended before each of ROUNDS rounds",
    )
    parser.add_argument(
        "--folder",
        type=int,
        metavar="FILES",
        default=0,
        help="tokens on a folder of FILES small ledgers (50 guide rows each) vs DuckDB",
    )
    parser.add_argument(
        "--collide",
        action="store_true",
        help="tokens --by task: --rows task_ids chosen to collide vs ordinary ones",
    )
    args = parser.parse_args()
    if args.append:
        with tempfile.TemporaryDirectory(prefix="bench_append_") as tmp:
            return bench_append(Path(tmp), args.rows, args.append)
    if args.folder:
        with tempfile.TemporaryDirectory(prefix="bench_folder_") as tmp:
            return bench_folder(Path(tmp), args.folder)
    if args.collide:
        with tempfile.TemporaryDirectory(prefix="bench_collide_") as tmp:
            return bench_collide(Path(tmp), args.rows)
    if args.guide or args.guide_memory:
        with tempfile.TemporaryDirectory(prefix="bench_guide_") as tmp:
            if args.guide_memory:
                return guide_memory(Path(tmp), args.rows, args.guide_memory)
            return bench_guide(Path(tmp), args.rows, args.repeat)
    if args.outcomes:
        with tempfile.TemporaryDirectory(prefix="bench_outcomes_") as tmp:
            return bench_outcomes(Path(tmp), args.rows, args.repeat)
    if args.dupes:
        with tempfile.TemporaryDirectory(prefix="bench_dupes_") as tmp:
            return bench_dupes(Path(tmp), args.rows, args.repeat)
    if shutil.which("jq") is None:
        print(
            "jq is not installed (apt-get install -y jq); cannot run the baseline", file=sys.stderr
        )
        return 2
    if args.memory:
        with tempfile.TemporaryDirectory(prefix="bench_ledger_") as tmp:
            return 0 if memory_rows(Path(tmp), args.rows, args.names, args.memory) else 1
    with tempfile.TemporaryDirectory(prefix="bench_ledger_") as tmp:
        path = args.ledger or Path(tmp) / "ledger.jsonl"
        start = time.perf_counter()
        if args.ledger is None:
            generate(path, args.rows, names=args.names, shape=args.shape)
        size_mb = os.path.getsize(path) / 1e6
        made = "given" if args.ledger else f"generated in {time.perf_counter() - start:.1f} s"
        print(
            f"ledger: {args.rows:,} rows ({args.names} names, {args.shape} rows), "
            f"{size_mb:,.0f} MB, {made}; {os.cpu_count()} CPUs; {_load()}"
        )
        path.read_bytes()  # warm the page cache so every contender reads from memory

        contenders = {
            "eloledger (in process)": run_eloledger,
            "eloledger tokens (CLI)": run_cli,
            "jq | awk": lambda p: run_jq_awk(
                p, GUIDE_NAMES["arm"] if args.names == "guide" else "arm"
            ),
        }
        if not args.no_json_loop:
            contenders["python json.loads loop"] = run_json_loop
        results = {}
        cpu: dict[str, float] = {}
        for _ in range(args.repeat):  # interleaved, so a burst of load hits everyone alike
            for name, run in contenders.items():
                before = _cpu()
                seconds, sums = run(path)
                cpu[name] = min(cpu.get(name, float("inf")), _cpu() - before)
                if name not in results or seconds < results[name][0]:
                    results[name] = (seconds, sums)

    baseline, expected = results["jq | awk"]
    same = all(sums == expected for _, sums in results.values())
    print(
        f"{'contender (best of ' + str(args.repeat) + ')':26} {'seconds':>9} {'x jq|awk':>9} "
        f"{'cpu s':>8} {'cpu x':>7}"
    )
    for name, (seconds, _) in results.items():
        print(
            f"{name:26} {seconds:9.3f} {seconds / baseline:9.3f} {cpu[name]:8.2f} "
            f"{cpu[name] / cpu['jq | awk']:7.3f}"
        )
    ratio = results["eloledger (in process)"][0] / baseline
    loop = results.get("python json.loads loop")
    if loop:
        print(f"eloledger vs json.loads loop: {results['eloledger (in process)'][0] / loop[0]:.3f}")
    print(f"sums identical: {same}  (goal: eloledger <= 0.1 x jq|awk; measured {ratio:.3f})")
    print(f"after: {_load()}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
