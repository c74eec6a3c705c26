"""One row contract: every writer builds a :class:`LedgerRow`, a name the schema does not have
fails when the row is built, and what each writer writes reads back through the main reader
as it was written (``row_contract.assert_reads_back_as_written``; the demo, the agent runner
and the LLM judge check their whole ledgers with it in their own tests)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import msgspec
import numpy as np
import orjson
import pytest
from row_contract import assert_reads_back_as_written

from eloledger.agents import importer
from eloledger.agents.claude_code import logs as claude
from eloledger.agents.logcall import Call
from eloledger.agents.usage import CallUsage
from eloledger.budget.checkpoint_sim import agent_rows
from eloledger.budget.fairness_sim import four_arm_design, guide_decision_example
from eloledger.judges.rows import judge_fields, verdict_fields
from eloledger.judges.rule import Verdict
from eloledger.ledger import schema
from eloledger.ledger.row import LedgerRow, row_from_dict
from eloledger.ledger.writer import LedgerWriter, encode_row
from eloledger.meter.call import MeteredCall
from eloledger.redact import register_secret
from eloledger.runner.agent_run import checkpoint_rows
from eloledger.runner.providers import CallResult
from eloledger.runner.resolve import Endpoint
from eloledger.runner.rows import call_row, task_labels
from eloledger.tasks import Task

TASK = Task(task_id="t1", prompt="2+2?", answer="4", split="test", tags=("math", "easy"))
ENDPOINT = Endpoint(profile="sim", wire_api="openai-chat", model="sim-small",
                    base_url="http://127.0.0.1:9/v1", api_key=None)  # fmt: skip
SAMPLE = {"task_id": "t1", "arm": "best_of_2", "session": 0, "sample": 1, "round": 0,
          "role": "sample", "prompt_hash": "ab12"}  # fmt: skip


def _chat_row(identity: dict, res: CallResult, attempt: int = 1) -> LedgerRow:
    return call_row(identity, res, run_id="r1", experiment="exp", model=None, endpoint=ENDPOINT,
                    labels=task_labels(TASK, None), attempt=attempt, max_tokens=256,
                    temperature=0.7)  # fmt: skip


def test_fields_are_the_rows_fields_in_the_rows_order() -> None:
    assert LedgerRow.__struct_fields__ == schema.FIELDS
    assert schema.FIELDS[0] == "v" and len(set(schema.FIELDS)) == len(schema.FIELDS)
    assert schema.documented_fields() == frozenset(schema.FIELDS)


def test_a_runner_row_naming_a_field_the_schema_lacks_fails_when_built() -> None:
    with pytest.raises(TypeError, match="bogus"):
        _chat_row({**SAMPLE, "bogus": 1}, CallResult(content="4"))
    with pytest.raises(TypeError, match="judged_by"):
        _chat_row({**judge_fields("t1", "a vs b", 0, 0, 0), "judged_by": "x"}, CallResult())


def test_an_import_row_naming_a_field_the_schema_lacks_fails_when_built() -> None:
    call = Call(key="m1/r1", usage=CallUsage(prompt_tokens=3, completion_tokens=1),
                session="s", model="m", extra={"is_sidechain": True})  # fmt: skip
    with pytest.raises(TypeError, match="is_sidechain"):
        call.row(claude.SOURCE)


def test_a_built_row_takes_no_field_the_schema_lacks_later() -> None:
    row = _chat_row(SAMPLE, CallResult(content="4"))
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


def _runner_rows() -> list[LedgerRow]:
    """The chat runner's rows: a scored sample, a retried error, an LLM judge call."""
    sample = _chat_row(SAMPLE, CallResult(content="4", prompt_tokens=12, completion_tokens=3,
                                          total_tokens=15, usage_source="server", latency_ms=8.5,
                                          finish_reason="stop", response_id="chatcmpl-1",
                                          model_answered="sim-small"))  # fmt: skip
    sample.score, sample.passed = 1.0, True  # as score_sample sets them
    failed = _chat_row(
        SAMPLE,
        CallResult(
            status="error", error_class="rate_limit", error="429 slow down", http_status=429
        ),
        attempt=2,
    )
    failed.will_retry = True
    identity = judge_fields("t1", "best_of_1 vs best_of_2", 0, 3, 1)
    judge = _chat_row({**identity, "judge_flags": ["B"]}, CallResult(content="VERDICT: A"))
    judge.update(verdict_fields(("best_of_1", "best_of_2"), 1, 1.0))
    return [sample, failed, judge]


def _agent_rows(tmp_path: Path) -> list[LedgerRow]:
    """An agent session's rows as the agent runner builds them: a metered call (with the
    session's identity) and the session's checkpoint."""
    session = LedgerRow(
        run_id="r1",
        experiment="exp",
        task_id="t1",
        arm="agent",
        session=0,
        sample=0,
        role="sample",
        agent="claude-code",
        model=None,
        profile="sim",
        base_url="http://127.0.0.1:9",
        attempt=1,
        total_tokens=40,
        turns=3,
    )
    call = MeteredCall(index=1, wire="anthropic", path="/v1/messages", model_asked="m",
                       model_answered=None, http_status=200, streamed=True,
                       usage=CallUsage(prompt_tokens=30, completion_tokens=10),
                       usage_note=None, estimate=CallUsage(), latency_ms=12.34, ttft_ms=None,
                       error=None, request_id=None, ts=1.7e9)  # fmt: skip
    identity = {
        k: session[k]
        for k in (
            "run_id",
            "experiment",
            "task_id",
            "arm",
            "session",
            "sample",
            "agent",
            "profile",
            "base_url",
            "attempt",
        )
    }
    metered = msgspec.structs.replace(call.row(), **identity)
    outcome = SimpleNamespace(
        verdict=Verdict(score=1.0, passed=True, answer=None),
        checkpoints=[],
        wall_s=2.5,
        evidence_dir=tmp_path / "ev",
    )
    marks = checkpoint_rows(session, outcome, TASK, tmp_path / "l.jsonl")  # type: ignore[arg-type]
    return [session, metered, *marks]


def test_every_writers_rows_read_back_as_written(tmp_path: Path) -> None:
    codex = Call(key="resp_9", usage=CallUsage(prompt_tokens=50, completion_tokens=5,
                                                reasoning_tokens=2), session="thread-1",
                 model="gpt-x", project="/p", ts=1.8e12, call_id="")  # fmt: skip
    inspect = Call(
        key="ev/1",
        usage=CallUsage(prompt_tokens=4, completion_tokens=1),
        session="log-1",
        model="m",
        call_id="c1",
        extra={"task_id": "17"},
    )
    parser = claude.Parser(Path("/logs/s-claude.jsonl"))
    token = parser.peek(_claude_line())
    assert type(token) is tuple
    sims = [
        *agent_rows(1, tasks=1, sessions=1, attempts=2, kind="levels"),
        *four_arm_design(tasks=1, seed=1)[:3],
        *guide_decision_example()[:2],
    ]
    ledger = tmp_path / "ledger.jsonl"
    with LedgerWriter(ledger) as writer:
        for row in [*_runner_rows(), *_agent_rows(tmp_path), codex.row("codex"),
                    inspect.row("inspect")]:  # fmt: skip
            writer.append(row)
        writer.append_line(parser.encode(token[3]))  # the import's hot path, encoded by hand
        batch = importer._Batch(writer)  # the import's zero-usage rule rewrites a row read back
        batch.append(Call(key="z", usage=CallUsage(), session="s", model="m").row("codex"))
        batch.flush()
        for row in sims:  # the studies' simulated ledgers: rows in memory, written as dicts
            writer.append(row)
    written = assert_reads_back_as_written(ledger)
    assert len(written) == 3 + 3 + 2 + 1 + 1 + len(sims)
    assert written[1]["will_retry"] and written[2]["winner"] == "best_of_2"  # shown as A
    assert written[4]["model_answered"] is None and written[5]["role"] == "checkpoint"
    assert written[9]["usage_source"] == "missing" and written[9]["error_class"] == "zero_usage"
