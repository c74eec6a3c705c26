"""The ledger reader: round trip with the writer, names from the wild, torn and bad lines."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import orjson
import pytest

from eloledger.errors import UserError
from eloledger.ledger import LedgerWriter
from eloledger.ledger.reader import iter_rows, parse_line, read_ledger


def write_lines(path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    path.write_text(text, encoding="utf-8")
    return path


def row(**fields: object) -> str:
    return json.dumps(fields)


def test_writer_reader_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with LedgerWriter(path) as writer:
        for i in range(6):
            writer.append(
                {
                    "task_id": f"t{i % 3}",
                    "arm": "best_of_2" if i % 2 else "single",
                    "session": f"s{i}",
                    "role": "sample",
                    "prompt_tokens": 10 + i,
                    "completion_tokens": 5,
                    "status": "ok",
                    "usage_source": "server",
                    "content": f"answer {i}",
                    "passed": i % 3 == 0,
                }
            )
    ledger = read_ledger(path)
    assert len(ledger) == 6
    assert ledger.warnings == []
    assert ledger["arm"].values() == ["single", "best_of_2"] * 3
    assert ledger["task_id"].values() == ["t0", "t1", "t2"] * 2
    np.testing.assert_array_equal(ledger["prompt_tokens"], [10, 11, 12, 13, 14, 15])
    # total = prompt + completion when absent
    np.testing.assert_array_equal(ledger["total_tokens"], [15, 16, 17, 18, 19, 20])
    np.testing.assert_array_equal(ledger["passed"], [1, 0, 0, 1, 0, 0])
    rows = ledger.rows()
    assert [r["content"] for r in rows] == [f"answer {i}" for i in range(6)]
    assert rows[0]["v"] == 1 and rows[0]["total_tokens"] == 15
    assert list(iter_rows(path)) == rows


def test_aliases_and_nested_usage(tmp_path: Path) -> None:
    lines = [
        # OpenAI chat completions usage, strategy/case_id aliases, an integer task id
        row(
            strategy="bo4",
            case_id=17,
            usage={
                "prompt_tokens": 100,
                "completion_tokens": 40,
                "total_tokens": 140,
                "prompt_tokens_details": {"cached_tokens": 64},
                "completion_tokens_details": {"reasoning_tokens": 30},
            },
        ),
        # Anthropic: input_tokens excludes cache reads/writes, so prompt = their sum
        row(
            arm="bo4",
            task="17",
            usage={
                "input_tokens": 10,
                "output_tokens": 20,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 5,
            },
        ),
        # top-level wild names; request/response tokens
        row(arm="single", task_id="18", input_tokens=7, output_tokens=3, text="hi"),
        # OpenAI Responses API usage
        row(
            arm="single",
            task_id="18",
            usage={
                "input_tokens": 50,
                "output_tokens": 25,
                "total_tokens": 75,
                "output_tokens_details": {"reasoning_tokens": 12},
                "input_tokens_details": {"cached_tokens": 8},
            },
        ),
        # Gemini usageMetadata
        row(
            arm="single",
            task_id="19",
            usageMetadata={
                "promptTokenCount": 9,
                "candidatesTokenCount": 4,
                "totalTokenCount": 13,
                "thoughtsTokenCount": 2,
            },
        ),
        # canonical name wins over an alias
        row(
            arm="a",
            strategy="b",
            task_id="20",
            prompt_tokens=1,
            input_tokens=99,
            completion_tokens=1,
        ),
    ]
    path = write_lines(tmp_path / "wild.jsonl", lines)
    ledger = read_ledger(path)
    rows = ledger.rows()
    assert ledger["arm"].values() == ["bo4", "bo4", "single", "single", "single", "a"]
    assert ledger["task_id"].values() == ["17", "17", "18", "18", "19", "20"]
    np.testing.assert_array_equal(ledger["prompt_tokens"], [100, 115, 7, 50, 9, 1])
    np.testing.assert_array_equal(ledger["completion_tokens"], [40, 20, 3, 25, 4, 1])
    np.testing.assert_array_equal(ledger["total_tokens"], [140, 135, 10, 75, 13, 2])
    np.testing.assert_array_equal(ledger["cached_tokens"][[0, 1, 3]], [64, 100, 8])
    np.testing.assert_array_equal(ledger["reasoning_tokens"][[0, 3, 4]], [30, 12, 2])
    assert ledger["usage_source"].values() == ["server"] * 6
    assert rows[2]["content"] == "hi" and "text" not in rows[2]
    assert rows[0]["task_id"] == "17" and "case_id" not in rows[0]
    # the exact path (iter_rows) and the columnar fast path agree
    exact = list(iter_rows(path))
    assert [r["total_tokens"] for r in exact] == [140, 135, 10, 75, 13, 2]


def test_torn_last_line_is_a_warning(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "torn.jsonl",
        [row(arm="a", task_id="t", total_tokens=5), row(arm="a", task_id="t", total_tokens=7)],
    )
    with open(path, "ab") as fh:
        fh.write(b'{"arm": "a", "task_id": "t", "total_to')
    seen: list[str] = []
    ledger = read_ledger(path, warn=seen.append)
    assert len(ledger) == 2
    assert ledger["total_tokens"].sum() == 12
    assert len(seen) == 1 and f"{path}:3:" in seen[0] and "torn" in seen[0]
    assert ledger.warnings == seen
    assert len(list(iter_rows(path))) == 2


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "ok.jsonl",
        [row(arm="a", total_tokens=5), row(arm="b", total_tokens=7)],
        newline_at_end=False,
    )
    seen: list[str] = []
    ledger = read_ledger(path, warn=seen.append)
    assert len(ledger) == 2 and seen == []


def test_malformed_middle_line_names_file_and_line(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "bad.jsonl",
        [
            row(arm="a", total_tokens=1),
            row(arm="a", total_tokens=2),
            '{"arm": "a", oops}',
            row(arm="a"),
        ],
    )
    with pytest.raises(UserError) as info:
        read_ledger(path)
    assert f"{path}:3: not valid JSON" in info.value.one_line()
    with pytest.raises(UserError, match=":3:"):
        list(iter_rows(path))


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (json.dumps({"arm": "a", "prompt_tokens": float("nan")}), "prompt_tokens is nan"),
        (json.dumps({"arm": "a", "total_tokens": float("inf")}), "total_tokens is inf"),
        (row(arm="a", completion_tokens=-3), "completion_tokens is negative"),
        (row(arm="a", total_tokens="12"), "total_tokens must be a number"),
        (row(arm="a", total_tokens=True), "total_tokens must be a number"),
        ("[1, 2, 3]", "expected a JSON object"),
        ('"just a string"', "expected a JSON object"),
        (row(arm="a", passed="yes"), "passed must be"),
        (row(arm="a", usage={"prompt_tokens": -1}), "prompt_tokens is negative"),
    ],
)
def test_bad_values_are_user_errors_with_line(tmp_path: Path, line: str, needle: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", [row(arm="a", total_tokens=1), line, row(arm="b")])
    with pytest.raises(UserError) as info:
        read_ledger(path)
    message = info.value.one_line()
    assert f"{path}:2:" in message
    assert needle in message


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(UserError, match="empty"):
        read_ledger(empty)
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \n")
    with pytest.raises(UserError, match="empty"):
        read_ledger(blank)
    with pytest.raises(UserError, match="no such ledger"):
        read_ledger(tmp_path / "nope.jsonl")
    with pytest.raises(UserError, match="directory"):
        read_ledger(tmp_path)
    only_torn = tmp_path / "torn.jsonl"
    only_torn.write_bytes(b'{"arm": "a", "tot')
    with pytest.raises(UserError, match="only a torn line"):
        read_ledger(only_torn)


def test_blank_lines_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b'{"arm":"a","total_tokens":1}\r\n\r\n{"arm":"b","total_tokens":2}\r\n')
    ledger = read_ledger(path)
    assert ledger["arm"].values() == ["a", "b"]
    assert [r["total_tokens"] for r in ledger.rows()] == [1, 2]


def test_resume_after_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "resume.jsonl"
    with LedgerWriter(path) as writer:
        writer.append({"arm": "a", "task_id": "t1", "total_tokens": 10})
    with open(path, "ab") as fh:
        fh.write(b'{"arm": "a", "task_id": "t2", "total_tok')  # the crash
    with LedgerWriter(path) as writer:  # a resumed run
        assert writer.torn_bytes_dropped > 0
        writer.append({"arm": "a", "task_id": "t2", "total_tokens": 20})
    seen: list[str] = []
    ledger = read_ledger(path, warn=seen.append)
    assert seen == []
    assert ledger["task_id"].values() == ["t1", "t2"]
    assert ledger["total_tokens"].tolist() == [10, 20]


def test_status_and_usage_inference(tmp_path: Path) -> None:
    lines = [
        row(arm="a", total_tokens=10, status="ok"),
        row(arm="a", total_tokens=10, status="success"),  # wild spelling of ok
        row(arm="a", status="timeout"),  # unknown status: an error, never a success
        row(arm="a", error="HTTP 500"),  # no status but an error: error
        row(arm="a"),  # no status, no error, no usage: ok with usage missing
        row(arm="a", total_tokens=4, usage_source="estimated"),
        row(arm="a", role="judge", total_tokens=3),
    ]
    path = write_lines(tmp_path / "status.jsonl", lines)
    ledger = read_ledger(path)
    assert ledger["status"].values() == ["ok", "ok", "error", "error", "ok", "ok", "ok"]
    assert ledger["usage_source"].values() == [
        "server",
        "server",
        "missing",
        "missing",
        "missing",
        "estimated",
        "server",
    ]
    assert ledger["role"].values() == ["sample"] * 6 + ["judge"]
    assert ledger.has_usage().tolist() == [True, True, False, False, False, True, True]


def test_parse_line_is_canonical() -> None:
    got = parse_line(b'{"strategy": "bo2", "case_id": 3, "input_tokens": 4, "output_tokens": 1}')
    assert got["arm"] == "bo2" and got["task_id"] == "3"
    assert got["prompt_tokens"] == 4 and got["completion_tokens"] == 1 and got["total_tokens"] == 5
    assert got["status"] == "ok" and got["role"] == "sample" and got["usage_source"] == "server"
    with pytest.raises(UserError, match="here.jsonl:9:"):
        parse_line(b"{nope", where="here.jsonl:9")
    assert math.isnan(read_rows_total(got))


def read_rows_total(got: dict) -> float:
    """score is absent -> None; a column of it is NaN."""
    from eloledger.ledger.reader import read_rows

    return float(read_rows([got])["score"][0])


def test_column_subset_and_unknown_column(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "l.jsonl", [row(arm="a", total_tokens=1)])
    ledger = read_ledger(path, columns=("arm", "total_tokens"))
    assert ledger.columns == ("arm", "total_tokens")
    with pytest.raises(KeyError, match="was not read"):
        ledger["task_id"]
    with pytest.raises(ValueError):
        read_ledger(path, columns=("bogus",))


def test_fast_path_matches_exact_path_on_a_larger_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as fh:
        for i in range(3000):
            ok = rng.random() > 0.1
            fh.write(
                orjson.dumps(
                    {
                        "task_id": f"t{rng.integers(50)}",
                        "arm": f"arm{i % 4}",
                        "role": "sample" if i % 7 else "judge",
                        "status": "ok" if ok else "error",
                        "prompt_tokens": int(rng.integers(1, 500)) if ok else None,
                        "completion_tokens": int(rng.integers(1, 500)) if ok else None,
                        "content": "x" * int(rng.integers(0, 100)),
                        "passed": bool(rng.random() > 0.5),
                    }
                )
                + b"\n"
            )
    fast = read_ledger(path)
    exact_rows = list(iter_rows(path))
    for name in ("arm", "task_id", "role", "status", "usage_source"):
        assert fast[name].values() == [r.get(name) for r in exact_rows], name
    for name in ("prompt_tokens", "completion_tokens", "total_tokens", "passed"):
        want = np.array([np.nan if r.get(name) is None else float(r[name]) for r in exact_rows])
        np.testing.assert_array_equal(fast[name], want)


def test_parallel_read_matches_serial(tmp_path: Path) -> None:
    path = tmp_path / "par.jsonl"
    rng = np.random.default_rng(5)
    with open(path, "wb") as fh:
        for i in range(2000):
            fh.write(
                orjson.dumps(
                    {
                        "arm": f"arm{rng.integers(5)}",
                        "task_id": f"t{rng.integers(40)}",
                        "status": "ok" if i % 9 else "error",
                        "total_tokens": int(rng.integers(0, 900)),
                        "content": "y" * int(rng.integers(0, 300)),
                    }
                )
                + b"\n"
            )
        fh.write(b'{"arm": "torn", "total_to')
    serial = read_ledger(path, workers=1)
    parallel = read_ledger(path, workers=3)
    assert len(serial) == len(parallel) == 2000
    assert serial.warnings == parallel.warnings and ":2001:" in serial.warnings[0]
    for name in ("arm", "task_id", "status"):
        assert serial[name].values() == parallel[name].values()
    np.testing.assert_array_equal(serial["total_tokens"], parallel["total_tokens"])
    # a bad line inside one worker's slice still gives the exact error
    lines = path.read_bytes().split(b"\n")
    lines[1500] = b"{oops"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(UserError, match=":1501: not valid JSON"):
        read_ledger(path, workers=3)
    lines[1500] = lines[1499]
    lines[100] = b"[1]"  # now in the slice this process decodes itself
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(UserError, match=":101: expected a JSON object"):
        read_ledger(path, workers=3)


@pytest.mark.parametrize(("brackets", "refused"), [(63, False), (64, True)])
def test_the_whole_file_reader_refuses_one_line_just_over_the_depth_limit_among_flat_rows(
    tmp_path: Path, brackets: int, refused: bool
) -> None:
    """Among thousands of flat rows without ``ts`` (the duplicate check reads every line) the
    line one level over the limit is named, and the line at the limit is read: the chunk's
    bracket count alone says nothing is too deep only when it is so."""
    from eloledger.ledger.merge import read_ledgers

    lines = [row(task_id=f"t{i}", arm="a", total_tokens=i) for i in range(3000)]
    lines[1234] = '{"arm": "a", "meta": ' + "[" * brackets + "]" * brackets + "}"
    path = write_lines(tmp_path / "edge.jsonl", lines)
    if refused:
        with pytest.raises(UserError, match=f"^{path}:1235: nested too deeply"):
            read_ledgers(path, columns=("arm", "total_tokens"))
    else:
        assert len(read_ledgers(path, columns=("arm", "total_tokens"))) == 3000
