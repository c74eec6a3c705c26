"""The importer's fast paths give exactly what the general paths give.

* Claude Code: ``Parser.feed_line`` (one typed msgspec decode) against orjson + ``Parser.feed`` on
  the real sample log and on generated variants of its assistant lines (every field present,
  absent, null or of another type; counters as ints, floats, bools, camelCase, huge);
* ``ledger_keys`` (bulk decode) against the line-by-line read, torn and foreign lines included;
* the CLI starts without numpy (the summary's import cost every command ~0.15 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eloledger.agents import importer
from eloledger.agents.claude_code import logs as claude
from eloledger.agents.logcall import FALLBACK
from eloledger.cli import tokens_cmd
from eloledger.ledger import summary

SAMPLE = Path(__file__).resolve().parents[1] / "data/agent-logs/samples/claude-project-session.jsonl"
BASE = {
    "type": "assistant",
    "message": {
        "id": "msg_1",
        "model": "claude-x",
        "usage": {
            "input_tokens": 3,
            "output_tokens": 5,
            "cache_read_input_tokens": 7,
            "cache_creation_input_tokens": 11,
        },
        "content": [{"type": "text", "text": "hi"}],
    },
    "requestId": "req_1",
    "timestamp": "2026-12-01T00:25:05.484Z",
    "isSidechain": False,
    "sessionId": "s-1",
    "cwd": "/home/user/work",
}
ODD_VALUES = [
    None,
    0,
    1,
    2.0,
    2.5,
    True,
    False,
    "",
    "x",
    "<synthetic>",
    [],
    {},
    10**30,
    -(2**63) - 1,
]
ODD = st.sampled_from(ODD_VALUES)
PATHS = [
    ("type",),
    ("message",),
    ("message", "id"),
    ("message", "model"),
    ("message", "usage"),
    *[("message", "usage", k) for k in claude.TOKEN_KEYS],
    ("message", "usage", "inputTokens"),
    ("message", "usage", "outputTokens"),
    ("message", "usage", "cacheReadInputTokens"),
    ("requestId",),
    ("timestamp",),
    ("isSidechain",),
    ("sessionId",),
    ("cwd",),
]


def _general(parser: claude.Parser, raw: bytes) -> object:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "not JSON"
    if not isinstance(obj, dict):
        return "not a JSON object"
    return parser.feed(obj)


def _same(raw: bytes, tmp: Path) -> None:
    parser = claude.Parser(tmp / "sess.jsonl")
    fast = parser.feed_line(raw)
    if fast is not FALLBACK:  # the fast path answered: it must answer what feed answers
        assert fast == _general(parser, raw), raw


def _edit(row: dict, path: tuple[str, ...], value: object, drop: bool) -> dict:
    row = json.loads(json.dumps(row))
    node = row
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            return row
        node = node[key]
    if drop:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return row


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), ODD, st.booleans()), max_size=4))
def test_feed_line_equals_feed(tmp_path_factory, edits) -> None:
    row = BASE
    for path, value, drop in edits:
        row = _edit(row, path, value, drop)
    _same(json.dumps(row).encode(), tmp_path_factory.mktemp("f"))


def test_feed_line_on_the_real_log_and_plain_lines(tmp_path: Path) -> None:
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} not found (the shared agent samples)")
    answered = 0
    for raw in SAMPLE.read_bytes().splitlines():
        if raw.strip():
            _same(raw.strip(), tmp_path)
            answered += claude.Parser(tmp_path / "s.jsonl").feed_line(raw.strip()) is not FALLBACK
    assert answered >= 1  # the real assistant lines take the fast path
    _same(orjson.dumps(BASE), tmp_path)
    assert claude.Parser(tmp_path / "s.jsonl").feed_line(orjson.dumps(BASE)) is not FALLBACK


def test_ledger_keys_bulk_equals_line_by_line(tmp_path: Path) -> None:
    rows = [
        {"source": "claude-code", "call_id": "a"},
        {"source": "claude-code", "call_id": "b", "dedupe_key": "b/r"},
        {"source": "claude-code", "call_id": "", "dedupe_key": ""},
        {"source": "codex", "call_id": "c"},  # another source
        {"source": "claude-code", "call_id": 7},  # not text: the line-by-line path
        {"note": "mentions claude-code", "call_id": "d"},
    ]
    ledger = tmp_path / "l.jsonl"
    body = b"".join(orjson.dumps(r) + b"\n" for r in rows) + b'{"source": "claude-code", "ca'
    for data in (body, body.replace(b'"call_id":7', b'"call_id":"7"'), b""):
        ledger.write_bytes(data)
        expected: set[str] = set()
        importer._keys_by_line(data.split(b"\n"), "claude-code", expected)
        assert importer.ledger_keys(ledger, "claude-code") == expected
    ledger.write_bytes(body.replace(b'"call_id":7', b'"call_id":"7"'))
    assert importer.ledger_keys(ledger, "claude-code") == {"a", "b/r", "7"}


def test_cli_start_does_not_import_numpy(tmp_path: Path) -> None:
    assert tokens_cmd.BY_CHOICES == summary.BY_CHOICES
    probe = "import sys, eloledger.cli as c; c.build_parser(); print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_feed_line_equals_feed_for_every_single_edit(tmp_path: Path) -> None:
    """Each field of the usual line changed alone, to every odd value, or dropped."""
    camel = {"inputTokens": 2, "outputTokens": 4, "cacheReadInputTokens": 6}
    bases = [
        BASE,
        {**BASE, "isSidechain": True},
        {**BASE, "message": {**BASE["message"], "usage": camel}},
        {**BASE, "message": {**BASE["message"], "usage": {**camel, "output_tokens": 9}}},
    ]
    fast = 0
    for base in bases:
        for path in PATHS:
            for value in [*ODD_VALUES, "drop"]:
                row = (
                    _edit(base, path, None, True)
                    if value == "drop"
                    else _edit(base, path, value, False)
                )
                raw = json.dumps(row).encode()
                _same(raw, tmp_path)
                fast += claude.Parser(tmp_path / "s.jsonl").feed_line(raw) is not FALLBACK
    assert fast > 200  # most edits keep the usual shape: the fast path really was compared
