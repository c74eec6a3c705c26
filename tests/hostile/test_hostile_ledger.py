"""Hostile ledger inputs: every case is one clear line + exit 2 (or a warning), never a
traceback, a hang, a lost row or a doubled one.

Each case class runs through the real CLI (``python -m eloledger ...`` in a subprocess with a
timeout, so a hang fails the test) at least once; the generated cases run in process.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_process import eloledger as _cli
from eloledger.cli import main

ROW = {"run_id": "r", "task_id": "t1", "arm": "a", "session": 0, "sample": 0, "status": "ok"}
SPEC = """\
[experiment]
name = "h"
profile = "sim"

[tasks]
source = "builtin:arith"
limit = 2

[[arms]]
name = "one"
kind = "single"
"""


def _one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    err = done.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("eloledger: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _rows(n: int, **extra: object) -> list[dict]:
    return [
        {**ROW, "sample": i, "prompt_tokens": 10, "completion_tokens": 5, "ts": 1.7e9 + i, **extra}
        for i in range(n)
    ]


# ----------------------------------------------------------------- non-regular files


@pytest.mark.parametrize(
    "command",
    [
        ["tokens"],
        ["elo", "COMPS", "--ledger"],
        ["curve"],
        ["fairness", "--old-1", "a", "--new-1", "b", "--old-n", "c", "--new-n", "d"],
        ["doctor", "--offline", "--ledger"],
        ["watch"],
    ],
    ids=["tokens", "elo", "curve", "fairness", "doctor", "watch"],
)
def test_a_fifo_is_refused_at_once_never_read(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "ledger.jsonl"
    os.mkfifo(fifo)
    comps = tmp_path / "c.csv"
    comps.write_text("task_id,a,b,outcome\nt,a,b,1\n")
    args = [str(comps) if a == "COMPS" else a for a in command]
    if command[0] == "fairness":
        args.insert(1, str(fifo))
    else:
        args.append(str(fifo))
    done = _cli(*args, timeout=30)  # blocking on the FIFO would time out here
    _one_line_error(done, str(fifo), "FIFO")


def test_gzip_ledger_is_named(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"arm": "a", "total_tokens": 3}\n'))
    _one_line_error(_cli("tokens", str(path)), "gzip is not supported", "gunzip")
    assert main(["elo", "--example", "--ledger", str(path), "--bootstrap", "0"]) == 2
    assert main(["curve", str(path)]) == 2


def test_a_directory_without_ledgers_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _one_line_error(_cli("tokens", str(tmp_path / "empty")), "holds no .jsonl ledger")
    _one_line_error(_cli("tokens", str(tmp_path / "nope-*.jsonl")), "no file matches")


@pytest.mark.parametrize("resume", [False, True])
def test_run_with_a_directory_as_ledger_is_one_line(tmp_path: Path, resume: bool) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    folder = tmp_path / "runs"
    folder.mkdir()
    extra = ["--resume"] if resume else []
    done = _cli("run", str(spec), "--headless", "--quiet", "--ledger", str(folder), *extra)
    _one_line_error(done, str(folder), "is a directory", "ledger.jsonl")
    assert list(folder.iterdir()) == []  # nothing written


def test_run_with_a_fifo_as_ledger_is_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    fifo = tmp_path / "l.jsonl"
    os.mkfifo(fifo)
    done = _cli("run", str(spec), "--headless", "--quiet", "--ledger", str(fifo), timeout=30)
    _one_line_error(done, "FIFO")


# ----------------------------------------------------------------- duplicates


def test_cat_l_l_is_not_doubled(tmp_path: Path) -> None:
    one = _write(tmp_path / "l.jsonl", _rows(5))
    dup = tmp_path / "dup.jsonl"
    dup.write_bytes(one.read_bytes() * 2)
    single = json.loads(_cli("tokens", str(one), "--format", "json").stdout)
    done = _cli("tokens", str(dup), "--format", "json")
    assert done.returncode == 0, done.stderr
    doubled = json.loads(done.stdout)
    assert doubled["groups"] == single["groups"]
    (warning,) = [w for w in doubled["warnings"] if "duplicate" in w]
    assert warning.startswith("5 duplicate rows") and f"{dup}:6 repeats {dup}:1" in warning


def test_same_call_in_two_shards_counts_once_naming_both_files(tmp_path: Path) -> None:
    rows = _rows(6)
    a = _write(tmp_path / "shard-0.jsonl", rows[:4])
    overlap = {**rows[3], "ts": 1.8e9, "latency_ms": 99.0}  # same call, written again elsewhere
    b = _write(tmp_path / "shard-1.jsonl", [overlap, *rows[4:]])
    done = _cli("tokens", str(tmp_path / "shard-*.jsonl"), "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (group,) = out["groups"]
    assert group["calls"] == 6 and group["total_tokens"] == 6 * 15
    assert any(f"{b}:1 repeats {a}:4" in w for w in out["warnings"])
    # a folder and an explicit list read the same
    by_dir = json.loads(_cli("tokens", str(tmp_path), "--format", "json").stdout)
    assert by_dir["groups"] == out["groups"]


# ----------------------------------------------------------------- absurd counts


def test_fractional_absurd_and_mismatched_counts_warn_with_file_line(tmp_path: Path) -> None:
    rows = _rows(4)
    rows[1]["prompt_tokens"] = 10.5
    rows[2]["total_tokens"] = 5e12
    rows[3]["total_tokens"] = 99  # 10 + 5 != 99
    path = _write(tmp_path / "l.jsonl", rows)
    done = _cli("tokens", str(path))
    assert done.returncode == 0, done.stderr
    assert f"2 row(s) have fractional or absurd (> 1e12) token counts, first at {path}:2" in (
        done.stderr
    )
    assert "2 row(s) have total_tokens != prompt_tokens + completion_tokens, first at " in (
        done.stderr
    )
    assert f"{path}:3" in done.stderr


def test_mismatch_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    rows = _rows(2)
    rows[1]["total_tokens"] = 1
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n\n" + json.dumps(rows[1]) + "\n")
    assert main(["tokens", str(path)]) == 0  # the exact path (blank lines) keeps line numbers


# ----------------------------------------------------------------- generated garbage

_JSONISH = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
)
_FIELDS = st.sampled_from(
    ["arm", "task_id", "status", "role", "usage_source", "prompt_tokens", "completion_tokens",
     "total_tokens", "input_tokens", "strategy", "ts", "session", "sample", "usage"]
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(st.dictionaries(_FIELDS, _JSONISH, max_size=6), min_size=1, max_size=6),
    junk=st.one_of(st.none(), st.binary(max_size=20)),
)
def test_generated_ledgers_give_a_result_or_one_line(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict], junk: bytes | None
) -> None:
    path = tmp_path_factory.mktemp("gen") / "l.jsonl"
    data = b"".join(json.dumps(r).encode() + b"\n" for r in rows)
    if junk is not None:
        data += junk + b"\n"
    path.write_bytes(data)
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["tokens", str(path), "--format", "json"])
    assert status in (0, 2)
    if status == 2:
        lines = err.getvalue().strip().splitlines()
        assert (
            len(lines) == 1 and lines[0].startswith("eloledger: error: ") and str(path) in lines[0]
        )


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(copies=st.lists(st.integers(0, 4), min_size=1, max_size=8))
def test_generated_repeats_never_double(
    tmp_path_factory: pytest.TempPathFactory, copies: list[int]
) -> None:
    """Any interleaving of repeated rows sums like the distinct rows."""
    base = _rows(5)
    order = [base[i] for i in copies]
    path = _write(tmp_path_factory.mktemp("rep") / "l.jsonl", order)
    from eloledger.ledger.columns import SUMMARY_COLUMNS
    from eloledger.ledger.tally import read_tally

    tally, _ = read_tally(path, (*SUMMARY_COLUMNS, "latency_ms", "ts"), "arm", None)  # `tokens`
    (group,) = tally.groups()
    assert group["calls"] == len(set(copies)) and group["total_tokens"] == 15 * len(set(copies))


@pytest.mark.parametrize("blank", [False, True], ids=["fast path", "exact path"])
def test_reasoning_counted_outside_completion_is_not_a_mismatch(
    tmp_path: Path, blank: bool
) -> None:
    from eloledger.ledger.merge import read_ledgers
    from eloledger.ledger.summary import count_warnings

    rows = _rows(3)
    rows[1].update(reasoning_tokens=7, total_tokens=22)  # 10 + 5 + 7: consistent
    rows[2].update(reasoning_tokens=7, total_tokens=23)  # matches nothing
    path = tmp_path / "l.jsonl"
    sep = "\n\n" if blank else "\n"
    path.write_text(sep.join(json.dumps(r) for r in rows) + "\n")
    (warning,) = count_warnings(read_ledgers(path))
    line = 5 if blank else 3
    assert warning.startswith("1 row(s) have total_tokens") and f"{path}:{line}" in warning


# ----------------------------------------------------------------- NUL bytes


@pytest.mark.parametrize(
    "where",
    ["in a decoded value", "in a skipped value", "between fields", "first byte", "last byte"],
)
@pytest.mark.parametrize("ts", [True, False], ids=["ts", "no ts"])
def test_a_nul_byte_anywhere_in_a_line_is_a_file_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, ts: bool
) -> None:
    """JSON allows no raw control byte, in a string or between tokens: the line is named
    (a line scanner once took a NUL after a value as valid JSON; no ts: the streamed fold
    with the duplicate rules must refuse it too)."""
    rows = [{**r, "content": "hello"} for r in _rows(20)]
    if not ts:
        rows = [{k: v for k, v in r.items() if k != "ts"} for r in rows]
    lines = [json.dumps(r) for r in rows]
    bad = lines[1]
    bad = {
        "in a decoded value": bad.replace('"arm": "a"', '"arm": "a\x00b"'),
        "in a skipped value": bad.replace('"hello"', '"hel\x00lo"'),
        "between fields": bad.replace(', "arm"', ",\x00 \"arm\""),
        "first byte": "\x00" + bad,
        "last byte": bad + "\x00",
    }[where]
    assert bad != lines[1]
    lines[1] = bad
    path = tmp_path / "ledger.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["tokens", str(path), "--format", "json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{path}:2" in err, err


# ----------------------------------------------------------------- hash flooding


def test_numbers_chosen_to_collide_never_become_dict_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's hash of a number is not seeded: k * (2**61 - 1) all hash to 0, so 40k such
    task_ids made factorising quadratic (129 s against 14 s for ordinary ids). The reader
    turns identifiers into text (seeded hashes) before any dict sees them; counted here, not
    timed (bench/bench_ledger.py --collide times it)."""
    from eloledger.ledger import columns

    keys_seen: list[type] = []
    raw_codes = columns._raw_codes

    def spy(values, n):  # type: ignore[no-untyped-def]
        values = list(values)
        keys_seen.extend({type(v) for v in values})
        return raw_codes(values, n)

    monkeypatch.setattr(columns, "_raw_codes", spy)
    flood = (1 << 61) - 1
    rows = [
        {"task_id": k * flood, "arm": k % 3 * flood, "sample": 0, "total_tokens": 2}
        for k in range(1, 2001)
    ]
    path = _write(tmp_path / "ledger.jsonl", rows)
    assert main(["tokens", str(path), "--format", "json", "--by", "task"]) == 0
    assert keys_seen and int not in keys_seen and float not in keys_seen, set(keys_seen)
