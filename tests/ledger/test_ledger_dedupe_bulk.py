"""The bulk duplicate check finds exactly what the line-by-line DuplicateFinder finds.

Ledgers are generated with everything the identity rules care about: numbers written as ints,
floats and strings, aliases (strategy, task, case_id) next to null canonical fields, a missing
role, rows without an identity, repeated lines (with and without surrounding blanks), the same
call in another file or the same file, escaped strings, and lines only the exact path reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from eloledger.ledger import dedupe, merge
from eloledger.ledger.dedupe import find_duplicates
from eloledger.ledger.merge import read_ledgers

IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "1", "1.0", "x\u00e9"]), st.integers(0, 2))
NUMBERS = st.one_of(st.none(), st.integers(0, 2), st.sampled_from([1.0, 0.0, "1", "0", True]))


PLAIN_IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "1"]))


@st.composite
def plain_rows(draw: st.DrawFn) -> dict:
    """Rows as the runner writes them (the bulk path's fastest case)."""
    row: dict = {"task_id": draw(st.sampled_from(["t1", "t2"])), "status": "ok"}
    for key in ("run_id", "arm", "session", "call_id"):
        if draw(st.booleans()):
            row[key] = draw(PLAIN_IDS)
    for key in ("sample", "round", "attempt"):
        if draw(st.booleans()):
            row[key] = draw(st.one_of(st.none(), st.integers(0, 2)))
    if draw(st.booleans()):
        row["role"] = draw(st.sampled_from(["sample", "judge"]))
    row["total_tokens"] = draw(st.integers(0, 3))
    return row


@st.composite
def rows(draw: st.DrawFn) -> dict:
    if draw(st.integers(0, 2)) == 0:
        return draw(plain_rows())
    row: dict = {"status": "ok", "total_tokens": draw(st.integers(0, 9))}
    for key in ("run_id", "task_id", "arm", "session", "role", "call_id"):
        if draw(st.booleans()):
            row[key] = draw(IDS)
    for key in ("sample", "round", "attempt"):
        if draw(st.booleans()):
            row[key] = draw(NUMBERS)
    for alias in ("strategy", "task", "case_id"):
        if draw(st.integers(0, 3)) == 0:
            row[alias] = draw(IDS)
    return row


def _line(row: dict, style: int) -> bytes:
    text = json.dumps(row, ensure_ascii=style == 1, separators=(",", ":") if style == 2 else None)
    return (("  " + text + " ") if style == 3 else text).encode()


@st.composite
def ledgers(draw: st.DrawFn) -> list[bytes]:
    pool = draw(st.lists(plain_rows() if draw(st.booleans()) else rows(), min_size=1, max_size=6))
    for row in list(pool):  # the same call written another way: role left out, a number as text
        other = {**row, "total_tokens": row["total_tokens"] + 1}
        if other.pop("role", None) is None:
            other["role"] = "sample"
        pool.append(other)
        if isinstance(row.get("sample"), int):
            pool.append({**row, "sample": str(row["sample"]), "total_tokens": 99})
    files = []
    for _ in range(draw(st.integers(1, 3))):
        lines = []
        for _ in range(draw(st.integers(1, 12))):
            lines.append(_line(draw(st.sampled_from(pool)), draw(st.integers(0, 3))))
            if draw(st.integers(0, 6)) == 0:
                lines.append(b"   ")
        files.append(b"\n".join(lines) + b"\n")
    return files


@settings(max_examples=300, deadline=None)
@given(ledgers(), st.sampled_from([1 << 23, 40, 150]))
def test_bulk_check_equals_the_line_by_line_check(files: list[bytes], chunk: int) -> None:
    data = [(f"/l{i}.jsonl", body) for i, body in enumerate(files)]
    expected_keep, expected_pairs = merge._find_duplicates_by_line(data)
    saved, dedupe._CHUNK = dedupe._CHUNK, chunk  # small chunks: lines numbered across them
    try:
        found = find_duplicates(data)
    finally:
        dedupe._CHUNK = saved
    assert found is not None  # plain JSON objects: the bulk path must vouch for them itself
    keep, pairs = found
    assert keep.tolist() == expected_keep.tolist()
    assert pairs == expected_pairs


def test_the_same_call_across_files_counts_once_within_a_file_twice(tmp_path: Path) -> None:
    call = {"task_id": "t", "arm": "a", "sample": 0, "status": "ok", "total_tokens": 5}
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps(call) + "\n" + json.dumps({**call, "total_tokens": 7}) + "\n")
    second.write_text(json.dumps({**call, "sample": "0", "ts": 1.0}) + "\n")
    ledger = read_ledgers([first, second])
    assert int(np.nansum(ledger.number("total_tokens"))) == 12  # the copy in b: counted once
    assert any(f"{second}:1 repeats {first}:1" in w for w in ledger.warnings)


def test_lines_the_bulk_path_cannot_vouch_for_go_line_by_line(tmp_path: Path) -> None:
    huge = 10**30  # orjson reads this as a float, msgspec as an int: only the exact path knows
    body = {"task_id": "t", "status": "ok", "total_tokens": 1}
    for extra in ({"sample": huge}, {"sample": {"n": 1}}):
        files = [(str(tmp_path / f"{i}.jsonl"), (json.dumps({**body, **extra}) + "\n").encode())
                 for i in range(2)]  # fmt: skip
        assert find_duplicates(files) is None
        keep, pairs = merge._find_duplicates_by_line(files)
        assert keep.tolist() == [True, False] and len(pairs) == 1
        paths = []
        for name, text in files:
            Path(name).write_bytes(text)
            paths.append(name)
        ledger = read_ledgers(paths)
        assert len(ledger) == 1 and ledger.warnings


def test_a_file_given_twice_is_all_duplicates(tmp_path: Path) -> None:
    body = b"".join(
        json.dumps({"task_id": f"t{i}", "sample": 0, "status": "ok", "total_tokens": 1}).encode()
        + b"\n"
        for i in range(5)
    )
    data = [(str(tmp_path / "a.jsonl"), body), (str(tmp_path / "b.jsonl"), body)]
    found = find_duplicates([data[0], data[0]])  # the same file twice: no call is fresh twice
    assert found is not None and found[0].tolist() == [True] * 5 + [False] * 5
    found = find_duplicates(data)
    assert found is not None and found == (found[0], merge._find_duplicates_by_line(data)[1])
    assert found[0].tolist() == merge._find_duplicates_by_line(data)[0].tolist()
