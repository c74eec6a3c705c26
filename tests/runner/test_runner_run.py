"""The runner end to end on the embedded simulator: rows, retries, quota, budget, cancel, judges."""

from __future__ import annotations

import asyncio
import csv
from collections import Counter
from pathlib import Path

import orjson
import pytest

from eloledger.ledger.schema import FIELDS
from eloledger.runner.counters import RunCounters
from eloledger.runner.run import run_experiment
from eloledger.runner.spec import parse_spec
from eloledger.sim.server import RETRY_AFTER

BASE = """\
[experiment]
name = "t"
profile = "sim"
concurrency = {concurrency}
seed = 1

[sim]
speed = {speed}
{sim}

[retry]
max_attempts = 3
base_s = 0.01
cap_s = 0.05

[tasks]
source = "{source}"
limit = {limit}

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "four"
kind = "best_of_n"
n = 4

[[arms]]
name = "sc"
kind = "self_consistency"
k = 3
{extra}
"""


def make_spec(
    tmp_path: Path,
    *,
    limit: int = 4,
    speed: float = 60,
    sim: str = "",
    extra: str = "",
    source: str = "builtin:arith",
    concurrency: int = 8,
    name: str = "t.ledger.jsonl",
):
    text = BASE.format(
        limit=limit, speed=speed, sim=sim, extra=extra, source=source, concurrency=concurrency
    )
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return parse_spec(text, path=path, ledger=tmp_path / name)


def rows_of(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


async def test_full_run_writes_every_call_and_comparisons(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    counters = RunCounters()
    result = await run_experiment(spec, counters=counters)
    rows = rows_of(spec.ledger)
    assert result.stopped == "completed"
    assert len(rows) == result.attempts == 4 * (1 + 4 + 3)
    keys = Counter((r["task_id"], r["arm"], r["session"], r["sample"]) for r in rows)
    assert max(keys.values()) == 1 and len(keys) == 32
    required = {
        "run_id",
        "experiment",
        "task_id",
        "arm",
        "session",
        "sample",
        "round",
        "role",
        "model",
        "profile",
        "base_url",
        "wire_api",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "usage_source",
        "latency_ms",
        "ttft_ms",
        "status",
        "attempt",
        "finish_reason",
        "max_tokens",
        "temperature",
        "ts",
        "content",
        "score",
        "passed",
    }
    for row in rows:
        assert required <= set(row), required - set(row)
        assert set(row) <= set(FIELDS)
        assert row["usage_source"] == "server" and row["status"] == "ok"
        assert row["total_tokens"] == row["prompt_tokens"] + row["completion_tokens"] > 0
        assert row["base_url"].startswith("http://127.0.0.1:") and row["role"] == "sample"
    # counters saw every row; estimates were replaced by usage
    assert sum(a.done for a in counters.arms.values()) == 32
    assert counters.total_tokens == sum(r["total_tokens"] for r in rows)
    assert counters.estimated_tokens == 0 and counters.in_flight == 0 and counters.finished
    assert counters.arm("four").planned == 16
    with open(result.comparisons_path) as fh:
        comps = list(csv.DictReader(fh))
    assert len(comps) == 4 * 3 and {c["outcome"] for c in comps} <= {"0", "0.5", "1"}
    with open(result.results_path) as fh:
        results = list(csv.DictReader(fh))
    assert len(results) == 12
    # best_of_n with a verifier never scores below any of its own samples
    for res in results:
        if res["arm"] == "four":
            own = [r for r in rows if r["arm"] == "four" and r["task_id"] == res["task_id"]]
            assert float(res["score"]) == max(r["score"] for r in own)
    assert result.arm_tokens == counters.total_tokens and result.judge_tokens == 0


async def test_existing_ledger_needs_resume(tmp_path: Path) -> None:
    from eloledger.errors import UserError

    spec = make_spec(tmp_path, limit=1)
    spec.ledger.write_text('{"experiment": "t"}\n')
    with pytest.raises(UserError, match="--resume"):
        await run_experiment(spec)


async def test_rate_limits_are_retried_after_retry_after(tmp_path: Path) -> None:
    speed = 8.0
    spec = make_spec(
        tmp_path, speed=speed, sim='fault = "429"\nfault_rate = 0.4\nseed = 5', limit=2
    )
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    retried = [r for r in rows if r.get("will_retry")]
    assert retried and result.retries == len(retried)
    by_key: dict[tuple, list[dict]] = {}
    for r in rows:
        by_key.setdefault((r["task_id"], r["arm"], r["sample"]), []).append(r)
    wait = RETRY_AFTER / speed
    for attempts in by_key.values():
        assert [r["attempt"] for r in attempts] == list(range(1, len(attempts) + 1))
        for prev, nxt in zip(attempts, attempts[1:], strict=False):
            assert prev["error_class"] == "rate_limit" and prev["http_status"] == 429
            assert prev["will_retry"] is True
            assert nxt["ts"] - prev["ts"] >= wait * 0.95  # honoured Retry-After
        assert attempts[-1].get("will_retry") is not True


async def test_quota_is_never_retried(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, sim='fault = "429_quota"', limit=2)
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    # 5 consecutive quota failures stop the run; calls already in flight finish
    assert 5 <= len(rows) < 2 * 8 and result.retries == 0
    assert result.stopped == "errors" and result.not_run == 2 * 8 - len(rows)
    assert {(r["status"], r["error_class"], r["http_status"], r["attempt"]) for r in rows} == {
        ("error", "quota", 429, 1)
    }
    assert not any(r.get("will_retry") for r in rows)
    assert all("key" not in r for r in rows)
    assert result.comparisons == 0  # no arm produced anything: nothing to compare
    assert result.failures[0].startswith("stopped after 5 consecutive quota failures (HTTP 429)")
    assert any("rate.quota" in f for f in result.failures[1:])


async def test_server_errors_are_retried_up_to_max_attempts(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, sim='fault = "500"', limit=1)
    await run_experiment(spec)
    rows = rows_of(spec.ledger)
    assert len(rows) == 8 * 3  # 8 calls x 3 attempts
    finals = [r for r in rows if not r.get("will_retry")]
    assert len(finals) == 8 and {r["attempt"] for r in finals} == {3}
    assert {r["error_class"] for r in rows} == {"server"}


async def test_budget_stops_new_calls(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=10, extra="[budget]\nmax_total_tokens = 1500", concurrency=4)
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    assert result.stopped == "budget"
    assert 0 < len(rows) < 80 and result.not_run == 80 - len(rows)
    spent = sum(r["total_tokens"] for r in rows)
    assert spent >= 1500
    assert spent <= 1500 + 4 * 600  # only the calls in flight at the stop may overshoot
    with open(result.results_path) as fh:
        for res in csv.DictReader(fh):  # only complete groups are judged
            n = {"one": 1, "four": 4, "sc": 3}[res["arm"]]
            assert int(res["samples"]) == n


async def test_same_budget_sets_max_tokens_and_reports_length_rate(tmp_path: Path) -> None:
    text_extra = "[budget]\nper_task_tokens = 80\n"
    spec = make_spec(tmp_path, limit=3, extra=text_extra)
    spec.arms[1].same_budget = True
    spec.arms[1].max_tokens = 80 // 4
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    four = [r for r in rows if r["arm"] == "four"]
    assert {r["max_tokens"] for r in four} == {20}
    assert all(r["completion_tokens"] <= 20 for r in four)
    stats = {a["arm"]: a for a in result.arms}
    assert stats["four"]["length_rate"] > 0.5
    assert stats["one"]["length_rate"] < stats["four"]["length_rate"]


async def test_cancel_then_resume_completes_exactly_the_missing_calls(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=6, speed=20, concurrency=4)
    cancel = asyncio.Event()
    counters = RunCounters()

    async def cancel_soon() -> None:
        while sum(a.done for a in counters.arms.values()) < 10:
            await asyncio.sleep(0.01)
        cancel.set()

    canceller = asyncio.create_task(cancel_soon())
    first = await run_experiment(spec, counters=counters, cancel=cancel)
    await canceller
    assert first.stopped == "cancelled" and first.comparisons_path is None
    partial = len(rows_of(spec.ledger))
    assert 10 <= partial < 48
    second = await run_experiment(spec, resume=True)
    rows = rows_of(spec.ledger)
    assert second.stopped == "completed" and second.resumed_calls == partial
    assert second.attempts == 48 - partial
    keys = Counter((r["task_id"], r["arm"], r["session"], r["sample"]) for r in rows)
    assert len(keys) == 48 and max(keys.values()) == 1
    assert {r["run_id"] for r in rows} == {first.run_id}  # one run, resumed


async def test_pause_holds_new_calls(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=2, speed=60)
    pause = asyncio.Event()
    pause.set()
    counters = RunCounters()
    task = asyncio.create_task(run_experiment(spec, counters=counters, pause=pause))
    await asyncio.sleep(0.3)
    assert counters.paused
    assert not spec.ledger.exists() or rows_of(spec.ledger) == []
    pause.clear()
    result = await task
    assert result.stopped == "completed" and len(rows_of(spec.ledger)) == 16


async def test_llm_judge_rows_are_separate_and_both_orders(tmp_path: Path) -> None:
    extra = '[judge]\nkind = "llm"\n\n[[arms]]\nname = "pick"\nkind = "best_of_n"\nn = 2\nselect = "judge"'
    spec = make_spec(tmp_path, limit=2, extra=extra)
    counters = RunCounters()
    result = await run_experiment(spec, counters=counters)
    rows = rows_of(spec.ledger)
    judges = [r for r in rows if r["role"] == "judge"]
    samples = [r for r in rows if r["role"] == "sample"]
    assert len(samples) == 2 * (1 + 4 + 3 + 2)
    # knockout for "pick" (1 match x 2 orders per task) + 6 arm pairs x 2 orders per task
    assert len(judges) == 2 * (2 + 6 * 2) == result.judge_calls
    assert {r["round"] for r in judges} == {0, 1}
    assert all(r["content"].strip() in ("VERDICT: A", "VERDICT: B", "VERDICT: TIE")
               for r in judges if r["status"] == "ok")  # fmt: skip
    assert counters.total_tokens == sum(r["total_tokens"] for r in samples)  # judges not in cost
    assert result.judge_tokens == sum(r["total_tokens"] for r in judges) > 0
    with open(result.comparisons_path) as fh:
        comps = list(csv.DictReader(fh))
    assert len(comps) == 2 * 6
    assert all(0.0 <= float(c["outcome"]) <= 1.0 for c in comps)


async def test_code_tasks_are_scored_by_their_tests(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=2, source="builtin:code")
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    assert result.stopped == "completed" and len(rows) == 16
    assert all(isinstance(r["score"], float) and isinstance(r["passed"], bool) for r in rows)
    assert any(r["passed"] for r in rows)


@pytest.mark.parametrize("wire", ["openai-responses", "anthropic"])
async def test_other_wire_apis_run(tmp_path: Path, wire: str) -> None:
    spec = make_spec(tmp_path, limit=1)
    spec.wire_api = wire
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    assert result.stopped == "completed" and len(rows) == 8
    assert {r["wire_api"] for r in rows} == {wire}
    assert all(r["usage_source"] == "server" and r["status"] == "ok" for r in rows)


async def test_resume_after_a_torn_last_line(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=1)
    first = await run_experiment(spec)
    data = spec.ledger.read_bytes()
    lines = data.splitlines(keepends=True)
    # drop the last 3 rows and leave half of one, as a crash mid-write would
    spec.ledger.write_bytes(b"".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2])
    second = await run_experiment(spec, resume=True)
    rows = rows_of(spec.ledger)
    assert second.attempts == 3 and len(rows) == len(lines) == first.attempts
    keys = Counter((r["task_id"], r["arm"], r["sample"]) for r in rows)
    assert max(keys.values()) == 1


def test_run_cli_prints_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from eloledger.cli import main

    spec = make_spec(tmp_path, limit=3)
    assert (
        main(
            [
                "run",
                str(spec.path),
                "--headless",
                "--bootstrap",
                "20",
                "--ledger",
                str(tmp_path / "a.jsonl"),
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    assert "player" in out.out and "tok/task" in out.out and "length%" in out.out
    assert "calls 24/24" in out.err  # the final progress line
    assert (
        main(
            [
                "run",
                str(spec.path),
                "--headless",
                "--format",
                "json",
                "--quiet",
                "--ledger",
                str(tmp_path / "b.jsonl"),
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    payload = orjson.loads(out.out)
    assert {p["name"] for p in payload["players"]} == {"one", "four", "sc"}
    assert payload["run"]["calls_made"] == 24 and "calls 24/24" not in out.err  # --quiet


async def test_sessions_repeat_each_arm_and_give_soft_outcomes(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, limit=3)
    spec.sessions = 3
    result = await run_experiment(spec)
    rows = rows_of(spec.ledger)
    assert len(rows) == 3 * 3 * 8 and {r["session"] for r in rows} == {0, 1, 2}
    with open(result.results_path) as fh:
        assert len(list(csv.DictReader(fh))) == 3 * 3 * 3
    with open(result.comparisons_path) as fh:
        outcomes = [float(c["outcome"]) for c in csv.DictReader(fh)]
    assert len(outcomes) == 9
    # each outcome is a share of 3 x 3 session pairs (ties half)
    assert all(abs(o * 18 - round(o * 18)) < 1e-9 for o in outcomes)
