"""One row contract: every writer builds a :class:`LedgerRow`, a name the schema does not have
fails when the row is built, and what each writer writes reads back through the main reader
as it was written (``row_contract.assert_reads_back_as_written``; the demo and the imports of
real logs check their whole ledgers with it in test_ledger_fields_documented.py)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import orjson
import pytest
from row_contract import assert_reads_back_as_written

from eloledger.agents import importer
from eloledger.agents.claude_code import logs as claude
from eloledger.agents.logcall import Call
from eloledger.agents.usage import CallUsage
from eloledger.ledger import schema
from eloledger.ledger.row import LedgerRow, row_from_dict
from eloledger.ledger.writer import LedgerWriter, encode_row
from eloledger.redact import register_secret


def test_fields_are_the_rows_fields_in_the_rows_order() -> None:
    assert LedgerRow.__struct_fields__ == schema.FIELDS
    assert schema.FIELDS[0] == "v" and len(set(schema.FIELDS)) == len(schema.FIELDS)
    assert schema.documented_fields() == frozenset(schema.FIELDS)


def test_an_import_row_naming_a_field_the_schema_lacks_fails_when_built() -> None:
    call = Call(key="m1/r1", usage=CallUsage(prompt_tokens=3, completion_tokens=1),
                session="s", model="m", extra={"is_sidechain": True})  # fmt: skip
    with pytest.raises(TypeError, match="is_sidechain"):
        call.row(claude.SOURCE)


def test_a_built_row_takes_no_field_the_schema_lacks_later() -> None:
    row = Call(key="k", usage=CallUsage(), session="s", model="m").row("codex")
    with pytest.raises(TypeError, match="not ledger fields: bogus"):
        row.update({"score": 1.0, "bogus": 2})
    with pytest.raises(AttributeError):
        row.bogus = 2  # type: ignore[attr-defined]


def test_a_dict_row_is_checked_and_refused_naming_every_unknown_field(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    with LedgerWriter(ledger) as writer, pytest.raises(TypeError) as caught:
        writer.append({"task_id": "t", "input_tokens": 3, "bogus": 1})
    assert "not ledger fields: bogus, input_tokens" in str(caught.value)
    assert ledger.read_bytes() == b""
    with pytest.raises(TypeError, match="strategy"):
        row_from_dict({"strategy": "a"})  # an alias is read, never written


def test_absent_and_null_stay_apart_and_the_version_is_always_written() -> None:
    line = encode_row(LedgerRow(task_id="t", prompt_tokens=None, ts=1.5))
    assert line == b'{"v":1,"task_id":"t","prompt_tokens":null,"ts":1.5}\n'
    assert orjson.loads(encode_row(LedgerRow(v=1, ts=2.0))) == {"v": 1, "ts": 2.0}


def test_the_writer_stamps_the_time_and_scrubs_secrets_on_its_copy_only() -> None:
    secret = "sk-row-contract-0123456789abcdef"
    register_secret(secret)
    row = LedgerRow(error=f"401: bad key {secret}", content=secret, base_url="http://h/v1")
    written = orjson.loads(encode_row(row))
    assert secret not in str(written) and written["base_url"] == "http://h/v1"
    assert isinstance(written["ts"], float)
    assert row.error == f"401: bad key {secret}" and row.ts is msgspec.UNSET  # left as it was


def test_numpy_numbers_are_written_as_plain_json() -> None:
    row = LedgerRow(sample=np.int64(3), score=np.float64(0.25), passed=np.bool_(True), ts=1.0)
    assert encode_row(row) == b'{"v":1,"sample":3,"ts":1.0,"score":0.25,"passed":true}\n'


def test_the_row_reads_like_a_row_read_back() -> None:
    row = LedgerRow(task_id="t", prompt_tokens=None)
    assert row.get("task_id") == "t" and row["task_id"] == "t"
    assert row.get("prompt_tokens", 0) is None  # set to null: not absent
    assert row.get("arm") is None and row.get("arm", "?") == "?" and row.get("nope") is None
    with pytest.raises(KeyError):
        row["arm"]
    assert row.to_dict() == {"v": 1, "task_id": "t", "prompt_tokens": None}


def _claude_line() -> bytes:
    return orjson.dumps({
        "type": "assistant", "requestId": "req_1", "timestamp": "2026-01-02T03:04:05.5Z",
        "isSidechain": True, "sessionId": "s-claude", "cwd": "/home/u/proj",
        "message": {"id": "msg_1", "model": "claude-x", "usage": {
            "input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7}},
    })  # fmt: skip


def test_every_writers_rows_read_back_as_written(tmp_path: Path) -> None:
    codex = Call(key="resp_9", usage=CallUsage(prompt_tokens=50, completion_tokens=5,
                                                reasoning_tokens=2), session="thread-1",
                 model="gpt-x", project="/p", ts=1.8e12, call_id="")  # fmt: skip
    inspect = Call(key="ev/1", usage=CallUsage(prompt_tokens=4, completion_tokens=1),
                   session="log-1", model="m", call_id="c1", extra={"task_id": "17"})
    parser = claude.Parser(Path("/logs/s-claude.jsonl"))
    token = parser.peek(_claude_line())
    assert type(token) is tuple
    ledger = tmp_path / "ledger.jsonl"
    with LedgerWriter(ledger) as writer:
        for row in [codex.row("codex"), inspect.row("inspect")]:
            writer.append(row)
        writer.append_line(parser.encode(token[3]))  # the import's hot path, encoded by hand
        batch = importer._Batch(writer)  # the import's zero-usage rule rewrites a row read back
        batch.append(Call(key="z", usage=CallUsage(), session="s", model="m").row("codex"))
        batch.flush()
    written = assert_reads_back_as_written(ledger)
    assert len(written) == 2 + 1 + 1
    assert written[1]["task_id"] == "17" and written[2]["sidechain"] is True
    assert written[3]["usage_source"] == "missing" and written[3]["error_class"] == "zero_usage"
