"""Token summaries and arm costs: hand-computed examples and a property against naive Python."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from summary_oracle import summarize, summary_warnings

from eloledger.ledger.reader import read_ledger
from eloledger.ledger.summary import SUMMARY_FIELDS


def ledger_from(tmp_path: Path, rows: list[dict], name: str = "l.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return read_ledger(path)


def test_task_normalised_mean_hand_computed(tmp_path: Path) -> None:
    # arm A: task t1 has two calls (100 + 300 = 400 tokens), task t2 one call (50).
    #   mean per call = 450 / 3 = 150; mean per task = (400 + 50) / 2 = 225.
    # arm B: one long task (1000) and one short task (10): per task (1000 + 10) / 2 = 505.
    rows = [
        {"arm": "A", "task_id": "t1", "total_tokens": 100},
        {"arm": "A", "task_id": "t1", "total_tokens": 300},
        {"arm": "A", "task_id": "t2", "total_tokens": 50},
        {"arm": "B", "task_id": "t1", "prompt_tokens": 600, "completion_tokens": 400},
        {"arm": "B", "task_id": "t2", "prompt_tokens": 6, "completion_tokens": 4},
    ]
    groups = {g["name"]: g for g in summarize(ledger_from(tmp_path, rows))}
    a, b = groups["A"], groups["B"]
    assert a["total_tokens"] == 450 and a["mean_total_tokens"] == 150
    assert a["task_mean_total_tokens"] == 225
    assert b["prompt_tokens"] == 606 and b["completion_tokens"] == 404
    assert b["total_tokens"] == 1010 and b["task_mean_total_tokens"] == 505
    assert list(a) == list(SUMMARY_FIELDS)


def test_errors_and_missing_usage_are_not_zero_token_successes(tmp_path: Path) -> None:
    rows = [
        {"arm": "A", "task_id": "t1", "total_tokens": 100, "status": "ok"},
        {"arm": "A", "task_id": "t2", "status": "ok"},  # usage missing
        {"arm": "A", "task_id": "t3", "status": "error", "error": "HTTP 500"},
        {"arm": "A", "task_id": "t4", "status": "error", "total_tokens": 77},  # failed, billed
        {"arm": "A", "task_id": "t1", "role": "judge", "total_tokens": 1000},  # not arm cost
        {"arm": "A", "task_id": "t1", "role": "probe", "total_tokens": 5},
    ]
    ledger = ledger_from(tmp_path, rows)
    (a,) = summarize(ledger)
    assert a["calls"] == 4 and a["ok"] == 2 and a["errors"] == 2 and a["usage_missing"] == 1
    assert a["total_tokens"] == 100
    assert a["mean_total_tokens"] == 100  # one ok call with usage, not 100 / 2
    assert a["task_mean_total_tokens"] == 100  # t2, t3, t4 are not zero-token tasks
    warnings = summary_warnings(ledger)
    assert any("1 ok call(s) have no token usage" in w for w in warnings)
    assert any("A: 77" in w for w in warnings)
    judges = summarize(ledger, roles=("judge",))
    assert judges[0]["total_tokens"] == 1000


def test_summary_by_task_and_missing_names(tmp_path: Path) -> None:
    rows = [
        {"arm": "A", "task_id": "t1", "total_tokens": 10},
        {"arm": "B", "task_id": "t1", "total_tokens": 30},
        {"task_id": "t2", "total_tokens": 5},  # no arm
        {"arm": "A", "total_tokens": 1},  # no task
    ]
    ledger = ledger_from(tmp_path, rows)
    by_task = {g["name"]: g for g in summarize(ledger, by="task")}
    assert by_task["t1"]["total_tokens"] == 40 and by_task["t1"]["calls"] == 2
    assert by_task["t1"]["task_mean_total_tokens"] == 40
    assert by_task["(none)"]["total_tokens"] == 1
    by_arm = {g["name"]: g for g in summarize(ledger)}
    assert by_arm["(none)"]["total_tokens"] == 5
    assert by_arm["A"]["task_mean_total_tokens"] == pytest.approx((10 + 1) / 2)
    with pytest.raises(ValueError):
        summarize(ledger, by="color")


def naive(rows: list[dict], key: str) -> dict[str, dict]:
    """The obvious per-row Python computation of the documented rules."""
    out: dict[str, dict] = {}
    per_task: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        if r["role"] not in ("sample", "select"):
            continue
        name = str(r.get(key) if r.get(key) is not None else r.get("strategy"))
        g = out.setdefault(name, {"calls": 0, "ok": 0, "usage_missing": 0, "p": 0, "c": 0, "t": 0})
        g["calls"] += 1
        prompt = r.get("prompt_tokens", r.get("input_tokens"))
        completion = r.get("completion_tokens")
        total = r.get("total_tokens")
        if total is None and prompt is not None and completion is not None:
            total = prompt + completion
        source = r.get("usage_source") or (
            "server"
            if total is not None or prompt is not None or completion is not None
            else "missing"
        )
        has_usage = source != "missing" and total is not None
        # an ok row whose usage is zero is missing usage, not a free call (design.md)
        has_usage = has_usage and (source == "estimated" or (total > 0 and prompt != 0))
        if r["status"] != "ok":
            continue
        g["ok"] += 1
        if not has_usage:
            g["usage_missing"] += 1
            continue
        g["p"] += prompt or 0
        g["c"] += completion or 0
        g["t"] += total
        per_task[name][str(r["task_id"])] += total
    for name, g in out.items():
        tasks = per_task.get(name, {})
        g["task_mean"] = sum(tasks.values()) / len(tasks) if tasks else None
    return out


ROW = st.fixed_dictionaries(
    {
        "arm": st.sampled_from(["a", "b", "c"]),
        "task_id": st.one_of(st.sampled_from(["t1", "t2", "t3", "t4"]), st.integers(0, 3)),
        "role": st.sampled_from(["sample", "select", "judge", "probe"]),
        "status": st.sampled_from(["ok", "ok", "ok", "error"]),
    },
    optional={
        "prompt_tokens": st.integers(0, 10_000),
        "completion_tokens": st.integers(0, 10_000),
        "total_tokens": st.integers(0, 30_000),
        "usage_source": st.sampled_from(["server", "estimated", "missing"]),
        "input_tokens": st.integers(0, 100),
        "strategy": st.sampled_from(["a", "z"]),
    },
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(ROW, min_size=1, max_size=40))
def test_summary_equals_naive_python(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict]
) -> None:
    path = tmp_path_factory.mktemp("prop") / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ledger = read_ledger(path)
    want = naive(rows, "arm")
    got = {g["name"]: g for g in summarize(ledger)}
    assert set(got) == set(want)
    for name, g in got.items():
        w = want[name]
        assert (g["calls"], g["ok"], g["usage_missing"]) == (
            w["calls"],
            w["ok"],
            w["usage_missing"],
        )
        assert g["errors"] == w["calls"] - w["ok"]
        assert (g["prompt_tokens"], g["completion_tokens"], g["total_tokens"]) == (
            w["p"],
            w["c"],
            w["t"],
        )
        if w["task_mean"] is None:
            assert g["task_mean_total_tokens"] is None
        else:
            assert g["task_mean_total_tokens"] == pytest.approx(w["task_mean"])
    # the exact (row by row) path gives the same columns as the fast path
    from eloledger.ledger.reader import read_rows

    exact = {g["name"]: g for g in summarize(read_rows(ledger.rows()))}
    assert exact == got
