"""End to end against the real LiteLLM proxy (``scripts/install_litellm.sh``).

One proxy per module, on 127.0.0.1, no database, telemetry off, its upstreams ``mock_response``
models and eloledger's own simulator (``x-sim-fault`` headers make the upstream fail). The real
``eloledger doctor`` and ``eloledger run`` CLIs run against it as subprocesses; the runner's
provider is called through the real openai/anthropic SDKs.

Skips, saying why, when the LiteLLM virtualenv is absent; ``.ci/run`` installs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from eloledger.runner.providers import Provider
from eloledger.sim.server import running_sim

ROOT = Path(__file__).resolve().parents[2]
SRC = str(ROOT / "src")
sys.path.insert(0, str(ROOT / "tests"))
from gateway_process import stop, wait_until_up  # noqa: E402
from runner_cli import rows, write_spec, write_tasks  # noqa: E402

LITELLM_DIR = Path(
    os.environ.get("ELOLEDGER_LITELLM_DIR", Path.home() / ".cache/eloledger-litellm")
)
LITELLM = LITELLM_DIR / "bin" / "litellm"
MASTER = "sk-litellm-master-7Hq2Zr"
QUIET = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_TELEMETRY": "False",
    "DISABLE_SCHEMA_UPDATE": "true",
    "NO_DOCS": "True",
}

pytestmark = pytest.mark.skipif(
    not LITELLM.exists(),
    reason=f"the LiteLLM proxy is not installed ({LITELLM} missing): run scripts/install_litellm.sh",
)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config(sim: int) -> str:
    def upstream(name: str, fault: str | None = None, extra: str = "") -> str:
        headers = f'\n      extra_headers: {{x-sim-fault: "{fault}"}}' if fault else ""
        return (
            f"  - model_name: {name}\n    litellm_params:\n      model: openai/sim-small\n"
            f"      api_base: http://127.0.0.1:{sim}/v1\n      api_key: sim-upstream-key"
            f"{headers}{extra}\n"
        )

    return (
        "model_list:\n"
        + upstream("good")
        + upstream("upstream-401", "401")
        + upstream("upstream-404", "404_model")
        + upstream("upstream-429", "429")
        + upstream("no-usage", "no_usage")
        # round 3: a broken deployment with a fallback, a deployment without /v1, an Anthropic
        # deployment without drop_params (no `seed`), one limited to 1 request a minute
        + upstream("gpt-main")
        + upstream("broken", "404_model")
        + "  - model_name: nov1\n    litellm_params:\n      model: openai/sim-small\n"
        f"      api_base: http://127.0.0.1:{sim}\n      api_key: sim-upstream-key\n"
        + "  - model_name: claude-strict-params\n    litellm_params:\n"
        "      model: anthropic/sim-small\n"
        f"      api_base: http://127.0.0.1:{sim}\n      api_key: sim-upstream-key\n"
        + upstream("limited", extra="\n      rpm: 1")
        + "  - model_name: mock\n    litellm_params:\n      model: openai/gpt-4o-mini\n"
        '      mock_response: "OK"\n'
        "  - model_name: claude-mock\n    litellm_params:\n      model: anthropic/claude-3-5-haiku\n"
        '      mock_response: "OK"\n'
        "  - model_name: times-out\n    litellm_params:\n      model: openai/gpt-4o-mini\n"
        '      mock_response: "OK"\n      mock_timeout: true\n      timeout: 1\n'
        f"general_settings:\n  master_key: {MASTER}\n"
        "litellm_settings:\n  num_retries: 0\n  drop_params: false\n"
        'router_settings:\n  fallbacks: [{"broken": ["gpt-main"]}]\n'
        "  routing_strategy: usage-based-routing-v2\n"  # enforces a deployment's rpm

    )


@pytest.fixture(scope="module")
def upstream() -> Iterator[Any]:
    """eloledger's simulator as LiteLLM's upstream, in this process: its stats count what it
    billed (the tokens every ledger row must equal)."""
    with running_sim(speed=20) as sim:
        yield sim


@pytest.fixture(scope="module")
def passthrough_upstream() -> Iterator[Any]:
    """The upstream of LiteLLM's /anthropic pass-through: it refuses the proxy's own
    ANTHROPIC_API_KEY (the user's key is LiteLLM's master key, and accepted)."""
    with running_sim(speed=20, api_keys={"the-right-upstream-key"}) as sim:
        yield sim


@pytest.fixture(scope="module")
def proxy(
    tmp_path_factory: pytest.TempPathFactory, upstream: Any, passthrough_upstream: Any
) -> Iterator[str]:
    """The LiteLLM proxy's root URL, with the simulator as its upstream (both on loopback)."""
    folder = tmp_path_factory.mktemp("litellm")
    sim_port, port = upstream.port, _port()
    (folder / "config.yaml").write_text(_config(sim_port))
    log = (folder / "litellm.log").open("wb")
    gw = subprocess.Popen(
        [str(LITELLM), "--config", str(folder / "config.yaml"), "--host", "127.0.0.1",
         "--port", str(port), "--num_workers", "1"],
        stdout=log, stderr=subprocess.STDOUT, cwd=folder,
        env={**os.environ, **QUIET, "HOME": str(folder),
             "ANTHROPIC_API_BASE": passthrough_upstream.base_url,
             "ANTHROPIC_API_KEY": "sk-ant-wrong-upstream-key"},
    )  # fmt: skip
    root = f"http://127.0.0.1:{port}"
    try:

        def live() -> bool:
            return httpx2.get(root + "/health/liveliness", timeout=2).status_code == 200

        wait_until_up(gw, live, folder / "litellm.log", "LiteLLM", 180)
        yield root
    finally:
        stop(gw)
        log.close()


def _doctor(*args: str, key: str = MASTER, home: Path | None = None) -> tuple[int, dict, str]:
    env = {**os.environ, "PYTHONPATH": SRC, "LL_KEY": key}
    if home is not None:
        env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    base = [sys.executable, "-m", "eloledger", "doctor", *args, "--timeout", "20"]
    done = subprocess.run(
        [*base, "--format", "json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode in (0, 1, 2), done.stderr
    text = subprocess.run(
        base, capture_output=True, text=True, env={**env, "COLUMNS": "80"}, timeout=120
    )
    return done.returncode, json.loads(done.stdout), text.stdout


def _adhoc(root: str, model: str, wire: str = "openai-chat", key: str = MASTER):  # noqa: ANN202
    return _doctor("--url", root, "--wire", wire, "--key-env", "LL_KEY", "--model", model, key=key)


def _codes(report: dict) -> set[str]:
    return {f["code"] for f in report["findings"]}


def _call(
    base: str, model: str, wire: str = "openai-chat", key: str = MASTER, max_tokens: int = 16
):  # noqa: ANN202
    async def go():  # noqa: ANN202
        provider = Provider(wire_api=wire, base_url=base, api_key=key, model=model, timeout_s=30)
        try:
            return await provider.call("Say OK.", max_tokens=max_tokens, temperature=0.0)
        finally:
            await provider.close()

    return asyncio.run(go())


# --- items 1 and 12: a good model passes, at the root too ------------------------------------


def test_a_good_model_at_the_root_is_probe_ok_with_the_missing_v1_warning(proxy: str) -> None:
    status, report, text = _adhoc(proxy, "good")
    assert status == 1, report  # a warning: the model answers, the URL as typed lacks /v1
    # --url is checked as typed: an OpenAI-family client given the root lacks /v1 (a warning,
    # with the fix), and the probe goes to the mended ROOT/v1, which works
    assert _codes(report) == {"probe.ok", "url.missing_v1"}, report
    probe = next(f for f in report["findings"] if f["code"] == "probe.ok")
    assert proxy + "/v1" in probe["evidence"] + probe["message"], probe
    row = _call(proxy + "/v1", "good")
    assert row.status == "ok" and row.usage_source == "server"
    assert row.request_id and row.response_id  # x-litellm-call-id and chatcmpl-…
    print("\n" + text)  # the 80-column capture for the report


# --- item 2: a wrong key (LiteLLM without a database: 400 No connected db) ---------------------


def test_a_wrong_key_is_a_key_problem_not_a_request_problem(proxy: str) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "good", key="sk-not-the-master-key")
    assert status == 2
    assert "auth.unauthorized" in _codes(report) and "request.rejected" not in _codes(report)
    finding = next(f for f in report["findings"] if f["code"] == "auth.unauthorized")
    assert "No connected db" in finding["message"] and "master key" in finding["message"]
    row = _call(proxy + "/v1", "good", key="sk-not-the-master-key")
    assert (row.error_class, row.http_status) == ("auth", 400)


# --- item 3: an unknown model (400 Invalid model name) -----------------------------------------


def test_an_unknown_model_is_named_with_the_listed_models(proxy: str) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "gpt-nonexistent")
    assert status == 2 and _codes(report) == {"model.not_found"}, report
    finding = report["findings"][0]
    assert "HTTP 400" in finding["message"] and "good" in finding["fix"]
    row = _call(proxy + "/v1", "gpt-nonexistent")
    assert row.error_class == "not_found" and "Invalid model name" in (row.error or "")


# --- item 4: the gateway's own upstream key ------------------------------------------------------


def test_the_gateways_upstream_key_is_not_blamed_on_the_user(proxy: str) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "upstream-401")
    codes = _codes(report)
    assert status == 2 and "auth.upstream_key" in codes, report
    assert "auth.header_form" not in codes and "auth.unauthorized" not in codes
    assert not any("env_http_headers" in f["fix"] for f in report["findings"])
    deadline = time.monotonic() + 60  # wait out the cooldown the probe's 401 started
    row = _call(proxy + "/v1", "upstream-401")
    while row.error_class == "cooldown" and time.monotonic() < deadline:
        time.sleep(row.retry_after_s or 1)
        row = _call(proxy + "/v1", "upstream-401")
    assert (row.error_class, row.http_status) == ("upstream_auth", 401), row
    from eloledger.runner.outcome import Where, advice

    said = advice(row.error_class, Where("ll", "$LL_KEY", proxy, "upstream-401"))
    assert said.startswith("auth.upstream_key") and "check the value of" not in said


# --- item 5: a persistent error behind cooldown 429s stops the run on its cause ----------------


def test_a_run_stops_on_the_404_behind_the_cooldowns(proxy: str, tmp_path: Path) -> None:
    done, written = _profile_run(proxy, tmp_path, "upstream-404", "openai-chat", n=12,
                                 concurrency=2)  # fmt: skip
    classes = [r.get("error_class") for r in written]
    assert classes and classes[0] == "not_found", classes
    assert set(classes) <= {"not_found", "cooldown"}, classes
    assert len(written) < 12, classes  # it stopped early instead of trying every call
    out = done.stdout + done.stderr
    assert "model.not_found" in out and "lower [experiment] concurrency" not in out, out


# --- item 6: Retry-After under LiteLLM's names ---------------------------------------------------


def test_the_upstreams_retry_after_is_read_under_litellms_names(proxy: str) -> None:
    row = _call(proxy + "/v1", "upstream-429")
    assert row.error_class == "rate_limit"
    assert row.retry_after_s is not None and row.retry_after_s < 1  # llm_provider-retry-after-ms
    status, report, _ = _adhoc(proxy + "/v1", "upstream-429")
    limited = [f for f in report["findings"] if f["code"] == "rate.limited"]
    assert status == 2 and limited, report
    assert "llm_provider-retry-after" in limited[0]["message"], limited


# --- item 7: the gateway's timeout --------------------------------------------------------------


def test_a_408_inside_timeout_s_is_the_gateways_timeout(proxy: str) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "times-out")
    assert status == 2 and "net.gateway_timeout" in _codes(report), report
    assert "net.timeout" not in _codes(report)
    row = _call(proxy + "/v1", "times-out")
    assert (row.error_class, row.http_status) == ("gateway_timeout", 408), row


# --- item 8: a JSON body for a stream request ----------------------------------------------------


def test_the_anthropic_json_answer_to_a_stream_is_taken_by_doctor_and_runner(proxy: str) -> None:
    status, report, _ = _adhoc(proxy, "claude-mock", wire="anthropic")
    assert "probe.ok" in _codes(report), report
    row = _call(proxy, "claude-mock", wire="anthropic")
    assert row.status == "ok" and row.content == "OK" and row.usage_source == "server", row


# --- item 10: the gateway counts usage itself when the upstream sends none -----------------------


def test_gateway_counted_usage_hides_missing_upstream_usage(proxy: str) -> None:
    """Documented in the README: the row says server although the upstream sent nothing."""
    row = _call(proxy + "/v1", "no-usage")
    assert row.status == "ok" and row.usage_source == "server" and row.prompt_tokens


# --- item 9: every wire a profile's clients use --------------------------------------------------


def test_a_profile_for_three_clients_is_probed_on_three_wires(proxy: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".config" / "eloledger"
    config.mkdir(parents=True)
    (config / "profiles.toml").write_text(
        f'[profiles.ll]\nbase_url = "{proxy}"\nkey_env = "LL_KEY"\nmodel = "good"\n'
        'clients = ["claude-code", "openai", "codex"]\nwire_api = "openai-chat"\n'
        '[profiles.ll.claude]\nmodel = "claude-mock"\n'
    )
    status, report, _ = _doctor("--profile", "ll", home=home)
    probed = {f["target"] for f in report["findings"] if f["target"].startswith("profile:ll")}
    wires = {t.split("(")[-1].rstrip(")") for t in probed}
    assert {"openai-chat", "anthropic", "openai-responses"} <= wires, report
    anthropic = [f for f in report["findings"] if f["target"].endswith("(anthropic)")]
    assert any("claude-mock" in f["message"] for f in anthropic), anthropic


# --- item 13: the litellm preset's derived URLs, observed on the real proxy ----------------------


def test_the_litellm_preset_passes_on_every_wire_of_its_clients(proxy: str) -> None:
    """The preset's paths are marked observed (not in FROM_DOCS): this is the observation."""
    import dataclasses

    from eloledger.doctor.probes import probe_all
    from eloledger.doctor.run import profile_targets
    from eloledger.profiles.presets import FROM_DOCS, PRESETS

    assert "litellm" not in FROM_DOCS
    assert all("not observed" in PRESETS[n].description for n in FROM_DOCS)
    preset = dataclasses.replace(PRESETS["litellm"], base_url=proxy, model="good", key_env="LL_KEY")
    os.environ["LL_KEY"] = MASTER
    try:
        results = probe_all(profile_targets(preset), timeout=20)
    finally:
        del os.environ["LL_KEY"]
    wires = {r.target.wire: r for r in results}
    assert set(wires) == {"openai-chat", "anthropic", "openai-responses", "gemini"}
    failed = {w: [f.code for f in r.findings] for w, r in wires.items() if not r.ok}
    assert not failed, failed


# --- round 3: what answered, the run's parameters, faults behind the gateway, rate windows -----


def _profile_run(
    proxy: str, tmp_path: Path, model: str, wire: str, n: int = 3, concurrency: int = 1
) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """``profile add`` + the real ``eloledger run`` through the proxy: (process, sample rows)."""
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": SRC, "LL_KEY": MASTER, "HOME": str(home),
           "XDG_CONFIG_HOME": str(home / ".config")}  # fmt: skip
    added = subprocess.run(
        [sys.executable, "-m", "eloledger", "profile", "add", "strict", "--base-url", proxy,
         "--key-env", "LL_KEY", "--model", model, "--wire-api", wire],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"task_id": f"t{i}", "prompt": f"Say {i}.", "answer": str(i)} for i in range(n)],
    )
    spec = write_spec(tmp_path, tasks, arms='[[arms]]\nname = "one"\n', concurrency=concurrency)
    ledger = tmp_path / "ledger.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec), "--headless", "--quiet",
         "--bootstrap", "0", "--ledger", str(ledger)],
        capture_output=True, text=True, env=env, timeout=400,
    )  # fmt: skip
    return done, [r for r in rows(ledger) if r.get("role") == "sample"]


def test_a_fallback_is_said_by_the_probe_and_on_every_row(
    proxy: str, upstream: Any, tmp_path: Path
) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "broken")
    substituted = [f for f in report["findings"] if f["code"] == "model.substituted"]
    assert substituted and "'gpt-main' answered" in substituted[0]["message"], report
    assert "attempted-fallbacks: 1" in substituted[0]["message"]  # (the key masks "litellm-")
    assert status == 1, report  # a warning: the answers are real, but another model's
    before = (upstream.stats.prompt_tokens, upstream.stats.completion_tokens)
    done, made = _profile_run(proxy, tmp_path, "broken", "openai-chat")
    billed = (
        upstream.stats.prompt_tokens - before[0],
        upstream.stats.completion_tokens - before[1],
    )
    assert made and {(r["model"], r["model_answered"]) for r in made} == {("broken", "gpt-main")}
    assert "'broken' was asked for but 3 of 3 ok calls were answered by another model" in (
        done.stderr
    )
    # every row's tokens are what the upstream billed for the calls that answered
    assert all(r["usage_source"] == "server" for r in made), made
    assert sum(r["completion_tokens"] for r in made) == billed[1]
    assert sum(r["prompt_tokens"] for r in made) == billed[0]


def test_a_parameter_the_deployment_lacks_fails_the_doctor_and_stops_the_run(
    proxy: str, tmp_path: Path
) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "claude-strict-params")
    assert status == 2 and "request.unsupported_param" in _codes(report), report
    finding = next(f for f in report["findings"] if f["code"] == "request.unsupported_param")
    assert "`seed`" in finding["message"] and "drop_params: true" in finding["fix"]
    row = _call(proxy + "/v1", "claude-strict-params")
    assert row.status == "ok", row  # without `seed` the same deployment answers
    done, made = _profile_run(proxy, tmp_path, "claude-strict-params", "openai-chat", n=8)
    assert done.returncode == 1
    assert {r["error_class"] for r in made} == {"unsupported_param"}, made
    assert len(made) < 8  # stopped after 5 identical rejections
    assert "request.unsupported_param" in done.stderr and "check max_tokens" not in done.stderr


def test_a_deployment_without_v1_is_the_gateways_fault_for_both(proxy: str) -> None:
    status, report, _ = _adhoc(proxy + "/v1", "nov1")
    assert status == 2 and "gateway.deployment" in _codes(report), report
    assert "path.not_found" not in _codes(report)
    finding = next(f for f in report["findings"] if f["code"] == "gateway.deployment")
    assert "litellm_params.api_base" in finding["fix"] and "need no change" in finding["fix"]
    deadline = time.monotonic() + 60  # wait out the cooldown the probe's 404 started
    row = _call(proxy + "/v1", "nov1")
    while row.error_class == "cooldown" and time.monotonic() < deadline:
        time.sleep(row.retry_after_s or 1)
        row = _call(proxy + "/v1", "nov1")
    assert row.error_class == "deployment", row
    from eloledger.runner.outcome import cause_code

    assert cause_code(row.error_class) == "gateway.deployment"


def test_rpm_limits_on_messages_wait_out_the_minute(proxy: str, tmp_path: Path) -> None:
    """Slow on purpose (up to a minute): LiteLLM's rpm 429 on /v1/messages has no retry hint
    and its window is a wall-clock minute; the run must wait it out, not fail tasks for good."""
    done, made = _profile_run(proxy, tmp_path, "limited", "anthropic", n=2)
    finals = [r for r in made if not r.get("will_retry")]
    limited = [r for r in made if r.get("http_status") == 429]
    assert done.returncode == 0, done.stderr
    assert len(finals) == 2 and all(r["status"] == "ok" for r in finals), made
    assert limited, made  # it was limited, and waited


def test_the_anthropic_passthroughs_own_key_is_the_gateways_not_yours(proxy: str) -> None:
    """LiteLLM's /anthropic pass-through forwards the upstream's own 401 body verbatim; only
    its x-litellm-model-api-base header says the proxy called the upstream (your key passed)."""
    status, report, _ = _adhoc(proxy + "/anthropic", "sim-small", wire="anthropic")
    assert status == 2 and "auth.upstream_key" in _codes(report), report
    assert "auth.unauthorized" not in _codes(report)
    finding = next(f for f in report["findings"] if f["code"] == "auth.upstream_key")
    assert "ANTHROPIC_API_KEY" in finding["fix"] and "$LL_KEY" in finding["fix"]
    row = _call(proxy + "/anthropic", "sim-small", wire="anthropic")
    assert (row.error_class, row.http_status) == ("upstream_auth", 401), row
