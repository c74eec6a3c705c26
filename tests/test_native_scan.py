"""The C line scanner (ledger/_linescan.c) against the msgspec path it stands in front of.

Whatever batch the scanner accepts must give exactly the columns the msgspec decoder gives
(same levels in the same order, same codes, same floats bit for bit, the same NeedsExactPath);
whatever it refuses goes the msgspec way, so refusing is always allowed, but plain ledgers must
be accepted (or the fast path would be silently dead). Lines come from hypothesis (keys
wanted and not, aliases, escapes, every JSON type, odd whitespace, numbers at the edges) and
from a list of hostile ones; random bytes must never crash it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eloledger.ledger import nativescan
from eloledger.ledger.columns import (
    PRICE_COLUMNS,
    SUMMARY_COLUMNS,
    Factor,
    NeedsExactPath,
    alias_swaps,
)
from eloledger.ledger.fastread import decode_msgspec
from eloledger.ledger.nativescan import scan_columns
from eloledger.rating.outcomes import OUTCOME_COLUMNS

TOKENS = (*SUMMARY_COLUMNS, "latency_ms", "ts")  # what `tokens` reads
NAME_SETS = (
    TOKENS,
    (*TOKENS, *PRICE_COLUMNS),
    ("reasoning_tokens",),  # the tally's second look, for unequal totals
    ("arm", "task_id", "session", "score", "error_class", "ttft_ms", "model"),
    ("status",),
    OUTCOME_COLUMNS,  # elo --ledger: passed and agent too
    ("passed", "will_retry", "agent"),
)


def test_the_scanner_is_built_and_on() -> None:
    """CI compiles it (setup.py): a missing build would leave every claim below untested."""
    assert nativescan._linescan is not None, "the C scanner did not build: see pip's output"
    assert nativescan.available()


def outcome(fn: Any, batch: bytes, names: tuple[str, ...]) -> Any:
    swaps = alias_swaps(batch.split(b"\n", 1)[0], names)
    try:
        return fn(memoryview(batch), names, swaps)
    except NeedsExactPath:
        return "exact path"


def same_columns(native: Any, slow: Any) -> None:
    if native == "exact path" or slow == "exact path":
        assert native == slow
        return
    (a, rows_a), (b, rows_b) = native, slow
    assert rows_a == rows_b
    assert list(a) == list(b)
    for name in a:
        x, y = a[name], b[name]
        if isinstance(y, Factor):
            assert isinstance(x, Factor), name
            assert x.levels == y.levels, name
            assert x.codes.tolist() == y.codes.tolist(), name
        else:
            assert x.dtype == y.dtype, name
            # bit for bit: NaN equals NaN, and -0.0 is not 0.0
            assert x.view(np.uint64).tolist() == y.view(np.uint64).tolist(), (name, x, y)


def check(batch: bytes, names: tuple[str, ...] = TOKENS) -> bool:
    """Compare both paths on ``batch``; True when the scanner accepted it."""
    native = outcome(scan_columns, batch, names)
    if native is None:
        return False
    same_columns(native, outcome(decode_msgspec, batch, names))
    return True


def writer_row(i: int, *, guide: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {
        "v": 1,
        "run_id": "r1",
        "task_id": f"task-{i % 13}",
        "arm": ["single", "best_of_8", "élan 🚀"][i % 3],
        "session": f"s{i}",
        "role": ["sample", "select", "judge"][i % 3],
        "model": "m-a" if i % 2 else "m-b",
        "latency_ms": 1000.5 + i,
        "ts": 1764400000.01 + i,
        "status": "ok" if i % 5 else "error",
        "usage_source": "server",
        "prompt_tokens": 10 * i,
        "completion_tokens": i,
        "total_tokens": 11 * i,
        "content": 'say "hi"\n\\ and \u00e9 \u2028 \U0001f680',
        "score": 0.5,
        "passed": [True, False, None, 1, 0.0][i % 5],
        "agent": ["claude-code", None, "", 0, [1]][i % 5],
        "will_retry": [False, True, 1, None, {}][i % 5],
        "tools": [{"name": "x", "args": {"a": [1, 2.5e-3, None, False]}}],
    }
    if i % 5 == 0:
        row["error"] = "HTTP 502"
    if guide:
        row["strategy"] = row.pop("arm")
        row["input_tokens"] = row.pop("prompt_tokens")
        row["output_tokens"] = row.pop("completion_tokens")
    return row


def lines(rows: list[dict[str, Any]], *, ascii_only: bool = False) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=ascii_only).encode() + b"\n" for r in rows)


@pytest.mark.parametrize("guide", [False, True])
@pytest.mark.parametrize("names", NAME_SETS)
def test_plain_ledgers_are_scanned_and_agree(guide: bool, names: tuple[str, ...]) -> None:
    batch = lines([writer_row(i, guide=guide) for i in range(60)])
    assert check(batch, names), "a plain ledger must take the fast path"
    assert check(batch.rstrip(b"\n"), names)  # no newline at the end
    assert check(batch.replace(b"\n", b"\r\n"), names)
    # Python's json.dumps escapes non-ASCII: plain too, unless a level needs the escape read
    ascii_rows = [writer_row(i) for i in range(9) if i % 3 != 2]
    assert check(lines(ascii_rows, ascii_only=True), names)
    assert check(lines([writer_row(i) for i in range(9)], ascii_only=True), names) is (
        not {"arm"} & set(names)
    )


def test_many_levels_grow_the_table_and_agree() -> None:
    """Thousands of distinct tasks and sessions: the level table grows many times over."""
    rows = [{**writer_row(i), "task_id": f"t-{i}", "session": "s" * (i % 40) + str(i)} for i in range(5000)]  # fmt: skip
    assert check(lines(rows), NAME_SETS[3])
    assert check(lines(rows), TOKENS)


def test_the_scanned_tally_is_the_msgspec_tally(tmp_path: Path) -> None:
    """The whole `tokens` command, both ways, on a ledger big enough for two workers."""
    from tests.test_issue21_tally import varied_rows

    ledger = tmp_path / "l.jsonl"
    rows = varied_rows(3, 4000)
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    outputs = []
    for native in ("1", "0"):
        env = {**os.environ, "ELOLEDGER_NATIVE": native}
        done = subprocess.run(
            [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["groups"]


# --------------------------------------------------------------------------- generated lines

KEYS = st.sampled_from(
    [
        *TOKENS,
        *PRICE_COLUMNS,
        "strategy",
        "input_tokens",
        "output_tokens",
        "request_tokens",
        "task",
        "case_id",
        "timestamp",
        "usage",
        "usageMetadata",
        "error",
        "error_class",
        "passed",
        "agent",
        "will_retry",
        "sandbox",
        "reasoning_tokens",
        "score",
        "session",
        "ttft_ms",
        "content",
        "x",
        "",
        "argh",
        "é",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-3, max_value=3000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 5e-324, 1e308, 1764400000.01, 0.1, 2.5e-3, 1e22, 1e23]),
    st.text(max_size=8),
    st.sampled_from(["ok", "error", "sample", "judge", "server", "estimated", "missing", "x"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
ROWS = st.lists(st.dictionaries(KEYS, VALUES, max_size=9), min_size=1, max_size=6)


def render(row: dict[str, Any], style: int) -> bytes:
    if style == 0:
        return json.dumps(row, separators=(",", ":")).encode()
    if style == 1:
        return json.dumps(row, ensure_ascii=False).encode()
    return json.dumps(row, indent=None, separators=(" , ", " : ")).encode().replace(b"{", b"{ \t")


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=ROWS, style=st.integers(0, 2), names=st.sampled_from(NAME_SETS))
@example(rows=[{"prompt_tokens": -0.0, "total_tokens": 1e23}], style=0, names=TOKENS)
@example(rows=[{"latency_ms": -0, "ts": 2**60 + 1}], style=0, names=TOKENS)
def test_generated_lines_agree(
    rows: list[dict[str, Any]], style: int, names: tuple[str, ...]
) -> None:
    batch = b"\n".join(render(r, style) for r in rows) + b"\n"
    check(batch, names)


@settings(max_examples=400, deadline=None)
@given(
    rows=st.lists(st.integers(0, 40), min_size=1, max_size=8),
    cut=st.integers(0, 4000),
    junk=st.binary(max_size=4),
    names=st.sampled_from(NAME_SETS),
)
def test_damaged_lines_agree(
    rows: list[int], cut: int, junk: bytes, names: tuple[str, ...]
) -> None:
    """Plain lines with bytes inserted, replaced or cut: refused, or read exactly as msgspec."""
    batch = lines([writer_row(i) for i in rows])
    at = cut % (len(batch) + 1)
    check(batch[:at] + junk + batch[at:], names)
    check(batch[:at] + junk + batch[at + len(junk) :], names)
    check(batch[:at], names)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    check(data)
    check(b'{"arm":"' + data + b'"}\n')


# --------------------------------------------------------------------------- hostile lines

REFUSED = [
    b'{"\\u0061rm":"x","arm":"y"}',  # an escaped key that spells a wanted one
    b'{"arm":"x","arm":"y"}',  # a wanted key twice
    b'{"arm":"a\\ud800"}',  # a lone surrogate escape
    b'{"content":"a\\ud800\\u0041"}',  # a high one without its low one
    b'{"content":"a\\udc00"}',  # a low one alone
    b'{"arm":"\xc0\xaf"}',  # an overlong encoding
    b'{"arm":"\xed\xa0\x80"}',  # a surrogate encoded in UTF-8
    b'{"content":"\xff"}',  # not UTF-8, in a value nobody reads
    b'{"content":"\xf4\x90\x80\x80"}',  # above U+10FFFF
    b'{"content":"\xe0\x80\xaf"}',  # overlong, in three bytes
    b'{"content":"\xf0\x80\x80\xaf"}',  # overlong, in four
    b'{"content":"\xe2\x82"}',  # cut short
    b'{"content":"\x80"}',  # a continuation byte alone
    b'{"content":"\xf5\x80\x80\x80"}',
    b'{"content":"a\x01b"}',  # a control character in a string
    b'{"content":"a\x00b"}',
    b'{"x":' + b"[" * 70 + b"]" * 70 + b"}",  # deeper than the scanner goes
    b'{"prompt_tokens":01}',
    b'{"prompt_tokens":1.}',
    b'{"prompt_tokens":.5}',
    b'{"prompt_tokens":+1}',
    b'{"prompt_tokens":1e}',
    b'{"prompt_tokens":-}',
    b'{"prompt_tokens":1e999}',  # overflows
    b'{"prompt_tokens":123456789012345678901234567890}',
    b'{"prompt_tokens":1.' + b"0" * 60 + b"1}",  # longer than the scanner reads
    b'{"x":1.' + b"0" * 60 + b"1}",
    b'{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # would overflow a recursive C stack
    b'{"x":' + b"[" * 100_000,
    b'{"x":' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"}",
    b'{"prompt_tokens":true}',
    b'{"prompt_tokens":"12"}',
    b'{"latency_ms":"12"}',
    b'{"ts":"2026-11-29T10:00:00Z"}',  # text timestamps: the msgspec path parses them
    b'{"status":"weird"}',  # not a literal the tight decoder knows
    b'{"role":"Sample"}',
    b'{"usage":{"prompt_tokens":3}}',  # nested usage: the loose decoder merges it
    b'{"arm":7}',
    b'{"arm":{"a":1}}',
    b'{"task_id":"a\\"b"}',  # an escape in a value that becomes a level
    b'{"arm":"x"} trailing',
    b'{"arm":"x"}{"arm":"y"}',
    b'["arm","x"]',
    b"",
    b"\n",
    b'{"arm":"x"}\n\n{"arm":"y"}',  # a blank line
    b'{"arm":"x",}',
    b'{"arm" "x"}',
    b'{arm:"x"}',
    b'{"arm":nul}',
    b'{"arm":"x"',
    b'{"arm":"unterminated}',
    b'{"content":"\\x41"}',
    b'{"content":"\\u12G4"}',
]


# Refused when elo --ledger's columns are read (passed, agent).
REFUSED_OUTCOMES = [
    b'{"passed":2}',  # passed is true, false, 0, 1 or null: the exact path names the line
    b'{"passed":"yes"}',
    b'{"passed":[]}',
    b'{"passed":0.5}',
    b'{"agent":1e400}',
    b'{"agent":[1,]}',
    b'{"sandbox":true}',
]


def short_ids(lines: list[bytes]) -> list[str]:
    return [repr(line[:32]) for line in lines]


@pytest.mark.parametrize("line", REFUSED, ids=short_ids(REFUSED))
def test_hostile_lines_are_refused(line: bytes) -> None:
    assert outcome(scan_columns, line, TOKENS) is None
    check(line)  # and the msgspec path still decides


@pytest.mark.parametrize("line", REFUSED_OUTCOMES, ids=short_ids(REFUSED_OUTCOMES))
def test_hostile_outcome_lines_are_refused(line: bytes) -> None:
    assert outcome(scan_columns, line, OUTCOME_COLUMNS) is None
    check(line, OUTCOME_COLUMNS)


ACCEPTED = [
    b'{"arm":"x","content":"\\u00e9\\ud83d\\ude80 \\" \\\\ \\/ \\b\\f\\n\\r\\t"}',
    b'{"arm":null,"task_id":null,"usage":null,"strategy":null}',
    b'{ "arm" : "x" , "total_tokens" : 3 }\r',
    b"{}",
    b'{"arm":"","task_id":"\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80"}',
    b'{"prompt_tokens":1E2,"completion_tokens":-0.0,"total_tokens":0e0,"latency_ms":-0}',
    b'{"error":{"deep":[1,{"a":[]}]},"x":[[[[]]]]}',
    b'{"passed":-0.0,"agent":"","will_retry":[ ]}',
    b'{"passed":1.0,"agent":{"a":null},"will_retry":-0}',
    b'{"passed":0,"agent":1e-400,"will_retry":" "}',
]


@pytest.mark.parametrize("line", ACCEPTED, ids=short_ids(ACCEPTED))
def test_odd_but_plain_lines_are_scanned_and_agree(line: bytes) -> None:
    assert check(line), line
    assert check(line, OUTCOME_COLUMNS), line


def test_negative_zero_and_rounding_match_python() -> None:
    batch = b'{"latency_ms":-0,"ts":-0.0,"total_tokens":0}\n{"latency_ms":0.1,"ts":1764400000.01}'
    columns, rows = scan_columns(memoryview(batch), TOKENS, ())
    assert rows == 2
    assert not math.copysign(1, columns["latency_ms"][0]) < 0  # an integer -0 is int 0
    assert math.copysign(1, columns["ts"][0]) < 0
    assert columns["ts"][1] == 1764400000.01 and columns["latency_ms"][1] == 0.1


@settings(max_examples=2000, deadline=None)
@given(
    mantissa=st.one_of(st.integers(0, 10**15), st.integers(0, 10**19)),
    point=st.integers(0, 20),
    exponent=st.one_of(st.none(), st.integers(-30, 30)),
    sign=st.sampled_from(["", "-"]),
    zeros=st.integers(0, 3),
)
@example(mantissa=514496474603100760, point=9, exponent=None, sign="", zeros=0)
@example(mantissa=36267854731514259, point=1, exponent=None, sign="-", zeros=0)
def test_decimals_read_as_python_reads_them(
    mantissa: int, point: int, exponent: int | None, sign: str, zeros: int
) -> None:
    """The scanner's own decimal reading (exact fast path, else Python's) is float()'s."""
    digits = "0" * zeros + str(mantissa)
    cut = max(1, len(digits) - point)  # digits before the point, the rest after it
    whole, fraction = digits[:cut].lstrip("0") or "0", digits[cut:]
    text = sign + whole + ("." + fraction if fraction else "")
    if exponent is not None:
        text += f"e{exponent:+d}"
    if "." not in text and "e" not in text:
        text += ".0"  # integers are read another way (tested above)
    batch = b'{"latency_ms":' + text.encode() + b"}\n"
    scanned = scan_columns(memoryview(batch), TOKENS, ())
    if scanned is None:  # only where the value is out of float range or too long
        assert len(text) > 40 or not math.isfinite(float(text))
        return
    got = scanned[0]["latency_ms"][0]
    assert math.copysign(1, got) == math.copysign(1, float(text)) and got == float(text), text
    check(batch)


def test_turned_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELOLEDGER_NATIVE", "0")
    assert scan_columns(memoryview(b'{"arm":"x"}\n'), TOKENS, ()) is None
