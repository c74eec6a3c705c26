"""The model that answered, beside the model asked for: on every row, in the run's, ``tokens``'
and ``elo``'s warnings, and in the doctor's probe.

The strict gateway plays a LiteLLM fallback: the deployment asked for fails and another model
answers under HTTP 200, said only by the body's ``model`` and LiteLLM's
``x-litellm-model-group`` header. Real HTTP, the real SDKs, the real CLIs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from elo_cli import elo_warnings
from eloledger.doctor.probes import ProbeTarget, probe
from eloledger.gateway.wire import answered_model, same_model
from runner_cli import add_profile, env, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

PING = [{"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"} for i in range(2)]
FALLBACK = {"gpt-strict": "claude-strict", "claude-strict": "gpt-strict"}


@pytest.mark.parametrize(
    ("wire", "headers"),
    [("openai-chat", True), ("openai-responses", False), ("anthropic", False)],
    ids=["chat-litellm-headers", "responses-body", "anthropic-body"],
)
def test_every_row_records_the_answering_model_and_the_run_warns(
    tmp_path: Path, wire: str, headers: bool
) -> None:
    config = GatewayConfig(reply="pong", answered_by=FALLBACK, litellm_headers=headers)
    with serve(config) as gw:
        add_profile(gw.root, key=GOOD_KEY, wire=wire)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", PING))
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    asked = "claude-strict" if wire == "anthropic" else "gpt-strict"
    samples = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "sample"]
    assert len(samples) == 4
    assert {(r["model"], r["model_answered"]) for r in samples} == {(asked, FALLBACK[asked])}
    assert f"model '{asked}' was asked for but 4 of 4 ok calls were answered" in done.stderr


def test_a_faithful_gateway_records_the_model_and_warns_of_nothing(tmp_path: Path) -> None:
    with serve(GatewayConfig(reply="pong", litellm_headers=True)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", PING))
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    samples = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "sample"]
    assert {r["model_answered"] for r in samples} == {"gpt-strict"}
    assert "answered by another model" not in done.stderr


def test_tokens_warns_with_the_first_line_of_a_substitution(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    lines = [
        {"arm": "a", "task_id": "t1", "role": "sample", "status": "ok", "model": "broken",
         "model_answered": "broken", "prompt_tokens": 5, "completion_tokens": 1,
         "total_tokens": 6, "ts": 1.0},
        {"arm": "a", "task_id": "t2", "role": "sample", "status": "ok", "model": "broken",
         "model_answered": "gpt-main", "prompt_tokens": 5, "completion_tokens": 1,
         "total_tokens": 6, "ts": 2.0},
        {"arm": "a", "task_id": "t3", "role": "sample", "status": "ok", "model": "gpt-4o",
         "model_answered": "gpt-4o-2024-08-06", "prompt_tokens": 5, "completion_tokens": 1,
         "total_tokens": 6, "ts": 3.0},
    ]  # fmt: skip
    ledger.write_text("".join(json.dumps(r) + "\n" for r in lines))
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
        capture_output=True, text=True, env=env(GOOD_KEY), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = json.loads(done.stdout)["warnings"]
    substituted = [w for w in warnings if "answered by another model" in w]
    assert len(substituted) == 1, warnings
    assert "'broken' was asked for but 1 of 2 ok calls" in substituted[0]
    assert f"gpt-main (1 call), first at {ledger}:2" in substituted[0]


def test_the_probe_says_which_model_answered(tmp_path: Path) -> None:
    config = GatewayConfig(answered_by=FALLBACK, litellm_headers=True)
    with serve(config) as gw:
        result = probe(ProbeTarget("gw", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"))
    assert result.answered == "claude-strict"
    codes = {f.code: f for f in result.findings}
    assert "x-litellm-attempted-fallbacks: 1" in codes["model.substituted"].message
    passed = result.passed_finding()
    assert passed is not None
    assert "model gpt-strict asked, claude-strict answered (ANOTHER model)" in passed.message


def test_answered_model_prefers_the_gateway_header_and_reads_every_shape() -> None:
    assert answered_model({"x-litellm-model-group": "gpt-main"}, {"model": "sim-small"}) == (
        "gpt-main"
    )
    assert answered_model({"x-litellm-model-group": "openai/*"}, {"model": "m"}) == "m"
    assert answered_model({}, {"type": "message_start", "message": {"model": "c"}}) == "c"
    assert answered_model({}, {"type": "response.created", "response": {"model": "r"}}) == "r"
    assert answered_model({}, {"modelVersion": "gemini-x"}) == "gemini-x"
    assert answered_model(None, {"choices": []}) is None


@pytest.mark.parametrize(
    ("asked", "answered", "same"),
    [
        ("gpt-4o", "gpt-4o-2024-08-06", True),
        ("claude-sonnet-4", "claude-sonnet-4-20250514", True),
        ("sim,sim-small", "sim-small", True),  # claude-code-router's provider,model
        ("sim-small", "openai/sim-small", True),  # LiteLLM's deployment name
        ("broken", "gpt-main", False),
        ("claude-sonnet-4", "sim-small", False),
        ("gpt-4o", "gpt-4o-mini", False),
    ],
)
def test_same_model_allows_snapshots_and_prefixes_only(
    asked: str, answered: str, same: bool
) -> None:
    assert same_model(asked, answered) is same





def test_elo_with_a_ledger_warns_of_a_substituted_model(tmp_path: Path) -> None:
    lines = [
        {"arm": arm, "task_id": f"t{i}", "role": "sample", "status": "ok", "model": "broken",
         "model_answered": "gpt-main" if arm == "b" else "broken", "prompt_tokens": 5,
         "completion_tokens": 1, "total_tokens": 6, "ts": float(n)}
        for n, (arm, i) in enumerate((a, i) for a in "ab" for i in range(3))
    ]  # fmt: skip
    warnings = elo_warnings(tmp_path, lines, "t0,a,b\nt1,b,a\nt2,a,b\n")
    assert any("'broken' was asked for but 3 of 6 ok calls" in w for w in warnings), warnings
