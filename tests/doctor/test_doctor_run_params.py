"""The probe sends the run's own parameters, so a gateway that rejects one fails the doctor,
not every call of the run afterwards.

LiteLLM with ``drop_params: false`` on a deployment that lacks ``seed`` answers 400
``UnsupportedParamsError … ['seed']`` (docs/observed/gateways.md); the strict gateway plays it. Real
HTTP: the doctor's probe, the runner's provider through the real SDKs, the real ``run`` CLI.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eloledger.doctor.probes import RUN_PARAMS, ProbeTarget, probe
from eloledger.runner.providers import Provider
from runner_cli import add_profile, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

BASE = {"model", "messages", "input", "max_tokens", "max_output_tokens", "stream", "store"}
ROOTED = {"anthropic"}  # wires whose clients take the root, not /v1


def _runner_request(gw, wire: str) -> dict:  # noqa: ANN001
    async def go() -> None:
        model = "claude-strict" if wire == "anthropic" else "gpt-strict"
        base = gw.root if wire in ROOTED else gw.v1
        provider = Provider(wire_api=wire, base_url=base, api_key=GOOD_KEY, model=model)
        try:
            await provider.call("hi", max_tokens=8, temperature=0.7, seed=3)
        finally:
            await provider.close()

    asyncio.run(go())
    return gw.requests[-1].body


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic"])
def test_the_probe_sends_every_parameter_the_runner_sends(wire: str) -> None:
    with serve(GatewayConfig()) as gw:
        sent = set(_runner_request(gw, wire)) - BASE - {"stream_options"}
        model = "claude-strict" if wire == "anthropic" else "gpt-strict"
        base = gw.root if wire in ROOTED else gw.v1
        start = len(gw.requests)
        result = probe(ProbeTarget("gw", base, wire, GOOD_KEY, model))
        probed = [r.body for r in gw.requests[start:] if r.method == "POST"]
    assert result.ok, result.findings
    assert sent == set(RUN_PARAMS[wire]) and sent, (sent, RUN_PARAMS[wire])
    assert all(sent <= set(body) for body in probed), probed


def test_a_rejected_seed_fails_the_probe_with_the_gateways_fix() -> None:
    with serve(GatewayConfig(unsupported_params=("seed",))) as gw:
        result = probe(ProbeTarget("gw", gw.v1, "openai-chat", GOOD_KEY, "gpt-strict"))
    assert not result.ok
    finding = next(f for f in result.findings if f.code == "request.unsupported_param")
    assert "rejects `seed`, which the run sends" in finding.message
    assert "set `drop_params: true` on the gateway" in finding.fix
    assert {f.code for f in result.findings if f.severity == "error"} == {
        "request.unsupported_param"
    }


def test_the_run_stops_after_repeated_identical_rejections(tmp_path: Path) -> None:
    tasks = [{"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"} for i in range(12)]
    with serve(GatewayConfig(unsupported_params=("seed",))) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks), concurrency=1)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 1, done.stderr
    made = rows(tmp_path / "l.jsonl")
    assert 5 <= len(made) < 24, len(made)
    assert {r["error_class"] for r in made} == {"unsupported_param"}
    assert "stopped after 5 consecutive unsupported_param failures (HTTP 400)" in done.stderr
    assert "request.unsupported_param" in done.stderr and "`seed`" in done.stderr
    assert "check max_tokens" not in done.stderr


def test_repeated_identical_400s_stop_a_run_even_unnamed(tmp_path: Path) -> None:
    tasks = [{"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"} for i in range(12)]
    with serve(GatewayConfig(mode="reject")) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks), concurrency=1)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 1, done.stderr
    assert 5 <= len(rows(tmp_path / "l.jsonl")) < 24
    assert "stopped after 5 consecutive bad_request failures (HTTP 400)" in done.stderr


def test_a_run_with_tasks_failed_for_good_exits_non_zero(tmp_path: Path) -> None:
    tasks = [{"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"} for i in range(3)]
    with serve(GatewayConfig(reply="pong", fail_when=lambda p: "(0)" in p)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks))
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 1, done.stderr
    assert "arm one: 1 of 3 calls failed for good after retries (1 server HTTP 500)" in (
        done.stderr
    )
