"""The doctor and the runner behind the real claude-code-router (``scripts/install_ccr.sh``).

One ccr process per module on 127.0.0.1 with a temporary HOME, its providers eloledger's own
simulator (a counting upstream: its stats say what it billed): a good provider, one whose
``api_base_url`` lacks ``/chat/completions``, one whose ``api_key`` the upstream refuses. The
doctor's probe and the runner's provider (the real anthropic SDK) ask the same things and must
name the same cause; one real ``eloledger run`` records which model answered.

Skips, saying why, when ccr is absent, unless ``ELOLEDGER_REQUIRE_CLIENTS=1`` (CI with npm):
then a missing ccr fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from eloledger.doctor.probes import ProbeTarget, probe
from eloledger.runner.outcome import cause_code
from eloledger.runner.providers import Provider
from eloledger.sim.server import running_sim

ROOT = Path(__file__).resolve().parents[2]
SRC = str(ROOT / "src")
sys.path.insert(0, str(ROOT / "tests"))
from gateway_process import stop, wait_until_up  # noqa: E402
from runner_cli import rows  # noqa: E402

CCR_DIR = Path(os.environ.get("ELOLEDGER_CCR_DIR", Path.home() / ".cache/eloledger-ccr"))
CCR = CCR_DIR / "node_modules" / ".bin" / "ccr"
CLIENT_KEY = "ccr-client-key-5Jd8Qw"
UPSTREAM_KEY = "sim-upstream-key-Zx81"

if not CCR.exists():
    if os.environ.get("ELOLEDGER_REQUIRE_CLIENTS") == "1":
        raise RuntimeError(f"claude-code-router is required here but {CCR} is missing")
    pytest.skip(
        f"claude-code-router is not installed ({CCR} missing): run scripts/install_ccr.sh",
        allow_module_level=True,
    )


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Upstreams:
    """The simulators behind ccr: ``good`` takes any key, ``strict`` only UPSTREAM_KEY."""

    def __init__(self, good, strict) -> None:  # noqa: ANN001
        self.good, self.strict = good, strict


@pytest.fixture(scope="module")
def ccr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Upstreams]]:
    home = tmp_path_factory.mktemp("ccr-home")
    port = _port()
    with (
        running_sim(speed=50) as good,
        running_sim(speed=50, api_keys={UPSTREAM_KEY}) as strict,
    ):
        chat = f"{good.base_url}/v1/chat/completions"
        config = {
            "APIKEY": CLIENT_KEY,
            "PORT": port,
            "HOST": "127.0.0.1",
            "LOG": False,
            "Providers": [
                {"name": "sim", "api_base_url": chat, "api_key": "any",
                 "models": ["sim-small", "sim-large"]},
                {"name": "nopath", "api_base_url": f"{good.base_url}/v1", "api_key": "any",
                 "models": ["sim-small"]},
                {"name": "badkey", "api_base_url": f"{strict.base_url}/v1/chat/completions",
                 "api_key": "sk-wrong-upstream-key", "models": ["sim-small"]},
            ],
            "Router": {"default": "sim,sim-small", "think": "sim,sim-large"},
        }  # fmt: skip
        (home / ".claude-code-router").mkdir()
        (home / ".claude-code-router" / "config.json").write_text(json.dumps(config))
        log = (home / "ccr.log").open("wb")
        gw = subprocess.Popen(
            [str(CCR), "start"], stdout=log, stderr=subprocess.STDOUT, cwd=home,
            env={**os.environ, "HOME": str(home)},
        )  # fmt: skip
        root = f"http://127.0.0.1:{port}"
        try:
            # node starts in ~10 s on a busy 2-core machine
            wait_until_up(gw, lambda: httpx2.get(root + "/", timeout=2).status_code > 0,
                          home / "ccr.log", "ccr", 90)  # fmt: skip
            yield root, Upstreams(good, strict)
        finally:
            stop(gw)
            log.close()


def _probe(root: str, model: str, key: str = CLIENT_KEY):  # noqa: ANN202
    return probe(ProbeTarget("ccr", root, "anthropic", key, model, "bearer", "$CCR_API_KEY"),
                 timeout=20)  # fmt: skip


def _call(root: str, model: str, key: str = CLIENT_KEY):  # noqa: ANN202
    async def go():  # noqa: ANN202
        provider = Provider(wire_api="anthropic", base_url=root, api_key=key, model=model,
                            timeout_s=30)  # fmt: skip
        try:
            return await provider.call("Say OK.", max_tokens=16, temperature=0.0, seed=1)
        finally:
            await provider.close()

    return asyncio.run(go())


def _errors(result) -> set[str]:  # noqa: ANN001
    return {f.code for f in result.findings if f.severity == "error"}


@pytest.mark.parametrize(
    ("model", "key", "code"),
    [
        ("nopath,sim-small", CLIENT_KEY, "gateway.deployment"),  # api_base_url without the path
        ("badkey,sim-small", CLIENT_KEY, "auth.upstream_key"),  # Providers[].api_key refused
        ("nope,sim-small", CLIENT_KEY, "model.not_found"),  # Provider 'nope' not found
        ("sim,sim-huge", CLIENT_KEY, "model.not_found"),  # the upstream's unknown model
        ("sim,sim-small", "sk-not-the-ccr-key", "auth.unauthorized"),  # plain-text 401
    ],
)
def test_the_doctor_and_the_runner_name_the_same_cause_behind_ccr(
    ccr: tuple[str, Upstreams], model: str, key: str, code: str
) -> None:
    root, _ = ccr
    result = _probe(root, model, key)
    row = _call(root, model, key)
    assert _errors(result) == {code}, result.findings
    assert row.status == "error" and cause_code(row.error_class or "") == code, row
    if code == "gateway.deployment":
        finding = next(f for f in result.findings if f.code == code)
        assert "Providers[].api_base_url" in finding.fix and "need no change" in finding.fix
        assert "does not exist" not in finding.message
    if code == "auth.upstream_key":
        finding = next(f for f in result.findings if f.code == code)
        assert "Providers[].api_key" in finding.fix and "$CCR_API_KEY" in finding.fix


def test_a_plain_model_name_is_answered_by_the_default_route_and_said(
    ccr: tuple[str, Upstreams],
) -> None:
    root, _ = ccr
    result = _probe(root, "claude-sonnet-4")
    assert result.answered == "sim-small"
    assert "model.substituted" in {f.code for f in result.findings}
    row = _call(root, "claude-sonnet-4")
    assert row.status == "ok" and row.model_answered == "sim-small"
    pinned = _call(root, "sim,sim-large")
    assert pinned.status == "ok" and pinned.model_answered == "sim-large"


def test_streams_through_ccr_lose_the_upstreams_usage_and_nothing_counts_as_free(
    ccr: tuple[str, Upstreams],
) -> None:
    """ccr 2.0.0 reports 0/0 tokens on streams whose upstream sends OpenAI's trailing usage
    chunk: the doctor fails it (usage.zero), the runner estimates and marks the row."""
    root, upstreams = ccr
    result = _probe(root, "sim,sim-small")
    assert "usage.zero" in _errors(result), result.findings
    before = upstreams.good.stats.completion_tokens
    row = _call(root, "sim,sim-small")
    billed = upstreams.good.stats.completion_tokens - before
    assert billed > 0  # the upstream did bill the call
    assert row.status == "ok" and row.usage_source == "estimated", row
    assert row.usage_note == "zero_usage"


def test_a_run_through_the_ccr_preset_records_the_answering_model(
    ccr: tuple[str, Upstreams], tmp_path: Path
) -> None:
    root, _ = ccr
    env = {**os.environ, "PYTHONPATH": SRC, "CCR_API_KEY": CLIENT_KEY}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "eloledger", *args], capture_output=True,
                              text=True, env=env, timeout=180)  # fmt: skip

    added = cli("profile", "add", "ccr", "--preset", "claude-code-router", "--base-url", root,
                "--model", "claude-sonnet-4")  # fmt: skip
    assert added.returncode == 0, added.stderr
    tasks = tmp_path / "t.jsonl"
    tasks.write_text("".join(
        json.dumps({"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"}) + "\n"
        for i in range(2)
    ))  # fmt: skip
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[experiment]\nname = "ccr"\nprofile = "ccr"\n\n[tasks]\nsource = "{tasks}"'
                    '\n\n[[arms]]\nname = "one"\n')  # fmt: skip
    done = cli("run", str(spec), "--headless", "--quiet", "--bootstrap", "0", "--ledger",
               str(tmp_path / "l.jsonl"))  # fmt: skip
    made = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "sample"]
    assert made and {(r["model"], r["model_answered"]) for r in made} == {
        ("claude-sonnet-4", "sim-small")
    }, made
    assert "'claude-sonnet-4' was asked for but 2 of 2 ok calls" in done.stderr
    assert all(r["usage_source"] == "estimated" for r in made)  # ccr dropped stream usage
