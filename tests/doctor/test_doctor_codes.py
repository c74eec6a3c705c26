"""Every documented finding code is triggered by a real scenario (files, env, HTTP on 127.0.0.1).

``SCENARIOS`` maps each code to the scenario that must produce it; a test asserts that this
set equals the registry ``CODES``, so a new code without a test (or a test for a code that
does not exist) fails.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from eloledger.doctor.effective import collect
from eloledger.doctor.findings import CODES, Finding
from eloledger.doctor.guide_vars import guide_var_findings
from eloledger.doctor.ledger_audit import audit_ledger
from eloledger.doctor.probes import ProbeTarget, probe
from eloledger.doctor.static import live_config_findings, profile_findings
from eloledger.doctor.urls import check_url
from eloledger.profiles.model import ClientOverride, Profile
from strict_gateway import GOOD_KEY, GatewayConfig, serve

Scenario = Callable[[Path, pytest.MonkeyPatch], list[Finding]]


def _static(monkeypatch: pytest.MonkeyPatch, **env: str) -> list[Finding]:
    for name in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE"):
        monkeypatch.delenv(name, raising=False)  # folder trust comes from the test's files
    monkeypatch.delenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    eff = collect()
    return eff.problems + live_config_findings(eff)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _probe(
    config: GatewayConfig,
    wire: str = "openai-chat",
    *,
    model: str | None = None,
    key: str = GOOD_KEY,
    url: Callable | None = None,
    auth: str | None = None,
    timeout: float = 2.0,
) -> list[Finding]:
    default_model = {"anthropic": "claude-strict", "gemini": "gemini-strict"}.get(
        wire, "gpt-strict"
    )
    with serve(config) as gw:
        base = url(gw) if url else (gw.root if wire in ("anthropic", "gemini") else gw.v1)
        result = probe(
            ProbeTarget("t", base, wire, key, model or default_model, auth, "$K"), timeout=timeout
        )
    return result.findings


def _relay_probe(model: str, *, litellm_upstream_401: bool = False) -> list[Finding]:
    from relay_emulator import GOOD, RelayConfig
    from relay_emulator import serve as serve_relay

    config = RelayConfig()
    if litellm_upstream_401:
        config.models[model] = "litellm_upstream_401"
    with serve_relay(config) as relay:
        return probe(ProbeTarget("t", relay.v1, "openai-chat", GOOD, model), timeout=5).findings


def _ledger(home: Path, rows: list[dict]) -> Path:
    path = home / "ledger.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


OK_ROW = {
    "run_id": "r1",
    "task_id": "t1",
    "arm": "best_of_4",
    "sample": 0,
    "model": "gpt-strict",
    "status": "ok",
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "total_tokens": 15,
    "base_url": "http://127.0.0.1:9/v1",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCENARIOS: dict[str, Scenario] = {
    "url.scheme": lambda h, m: check_url("gw.example/api/v1", "openai"),
    "url.whitespace": lambda h, m: check_url("https://gw.example/api/v1 \n", "openai"),
    "url.query_string": lambda h, m: check_url("https://gw.example/v1?utm_source=x", "openai"),
    "url.fragment": lambda h, m: check_url("https://gw.example/v1#models", "codex"),
    "url.missing_v1": lambda h, m: check_url("https://gw.example/api", "openai"),
    "url.extra_v1": lambda h, m: check_url("https://gw.example/api/v1", "claude-code"),
    "url.endpoint_path": lambda h, m: check_url(
        "https://gw.example/v1/chat/completions", "openai-chat"
    ),
    "url.trailing_slash": lambda h, m: check_url("https://gw.example/api/", "claude-code"),
    "gemini.extra_v1beta": lambda h, m: check_url("https://gw.example/v1beta", "gemini-cli"),
    "env.empty_base_url": lambda h, m: _static(m, OPENAI_BASE_URL="", OPENAI_API_KEY="sk-a1"),
    "env.shadowed": lambda h, m: (
        _write(h / ".claude/settings.json", '{"env": {"ANTHROPIC_BASE_URL": "https://a.example"}}'),
        _static(m, ANTHROPIC_BASE_URL="https://b.example"),
    )[1],
    "auth.missing_key": lambda h, m: profile_findings(
        Profile("gw", "https://gw.example/api", key_env="GW_KEY_UNSET")
    ),
    "auth.placeholder_key": lambda h, m: _static(
        m, OPENAI_BASE_URL="https://gw.example/v1", OPENAI_API_KEY="YOUR_API_KEY"
    ),
    "auth.key_whitespace": lambda h, m: _static(
        m, OPENAI_BASE_URL="https://gw.example/v1", OPENAI_API_KEY="sk-abcdefgh12345678\n"
    ),
    "auth.both_anthropic_vars": lambda h, m: (
        _write(
            h / ".claude/settings.json",
            json.dumps(
                {
                    "env": {
                        "ANTHROPIC_BASE_URL": "https://gw.example/api",
                        "ANTHROPIC_AUTH_TOKEN": "sk-tok-1234567",
                        "ANTHROPIC_API_KEY": "sk-key-1234567",
                    }
                }
            ),
        ),
        _static(m),
    )[1],
    "auth.unauthorized": lambda h, m: _probe(GatewayConfig(), key="sk-wrong-0000000000000"),
    "auth.header_form": lambda h, m: _probe(
        GatewayConfig(header_forms=frozenset({"x-api-key"})), "anthropic"
    ),
    "auth.forbidden": lambda h, m: _probe(GatewayConfig(mode="forbidden")),
    "path.not_found": lambda h, m: _probe(GatewayConfig(prefix="/api"), url=lambda g: g.root),
    "model.not_found": lambda h, m: _probe(GatewayConfig(), model="gpt-nonexistent"),
    "rate.limited": lambda h, m: _probe(GatewayConfig(mode="rate_limited")),
    "rate.quota": lambda h, m: _probe(GatewayConfig(mode="quota")),
    "server.error": lambda h, m: _probe(GatewayConfig(mode="server_error")),
    "request.rejected": lambda h, m: _probe(GatewayConfig(mode="reject")),
    "request.unsupported_param": lambda h, m: _probe(GatewayConfig(unsupported_params=("seed",))),
    "model.substituted": lambda h, m: _probe(
        GatewayConfig(answered_by={"gpt-strict": "claude-strict"}, litellm_headers=True)
    ),
    "gateway.deployment": lambda h, m: _probe(
        GatewayConfig(
            canned=(
                404,
                "application/json",
                '{"error":{"message":"litellm.NotFoundError: OpenAIException - Invalid URL '
                "(POST /chat/completions) LiteLLM: model group 'gpt-strict' failed\"}}",
                {},
            )
        )
    ),
    "probe.ok": lambda h, m: _adhoc_ok(),
    "net.unreachable": lambda h, m: (
        probe(
            ProbeTarget("t", f"http://127.0.0.1:{_free_port()}/v1", "openai-chat", GOOD_KEY, "m"),
            timeout=1,
        ).findings
    ),
    "net.timeout": lambda h, m: _probe(GatewayConfig(mode="slow", delay=1.5), timeout=0.3),
    # a relay whose upstream times out (408 in 0.3 s), and LiteLLM's upstream key
    "ledger.usage_disagree": lambda h, m: audit_ledger(
        _ledger(h, [OK_ROW | {"usage_check": "disagree"}])
    ),
    "net.gateway_timeout": lambda h, m: _relay_probe("slow-upstream"),
    "auth.upstream_key": lambda h, m: _relay_probe("gpt-4o-mini", litellm_upstream_401=True),
    "net.tls": lambda h, m: _probe(GatewayConfig(), url=lambda g: f"https://127.0.0.1:{g.port}/v1"),
    "response.not_json": lambda h, m: _probe(GatewayConfig(mode="html")),
    "usage.missing": lambda h, m: _probe(GatewayConfig(mode="usage_missing")),
    "usage.zero": lambda h, m: _probe(GatewayConfig(mode="usage_zero"), "anthropic"),
    "usage.stream_missing": lambda h, m: _probe(GatewayConfig(mode="stream_no_usage")),
    "codex.wire_api_chat": lambda h, m: (
        _write(
            h / ".codex/config.toml",
            'model_provider = "gw"\n[model_providers.gw]\n'
            'base_url = "https://gw.example/v1"\nenv_key = "GW_KEY"\nwire_api = "chat"\n',
        ),
        _static(m, GW_KEY="sk-gw-12345678"),
    )[1],
    "codex.legacy_profiles": lambda h, m: (
        _write(h / ".codex/config.toml", 'profile = "fast"\n[profiles.fast]\nmodel = "o3"\n'),
        _static(m),
    )[1],
    "codex.builtin_redefined": lambda h, m: (
        _write(
            h / ".codex/config.toml",
            '[model_providers.openai]\nbase_url = "https://gw.example/v1"\n',
        ),
        _static(m),
    )[1],
    "codex.env_key_unset": lambda h, m: (
        _write(
            h / ".codex/config.toml",
            'model_provider = "gw"\n[model_providers.gw]\n'
            'base_url = "https://gw.example/v1"\nenv_key = "GW_KEY_NOT_SET"\n'
            'wire_api = "responses"\n',
        ),
        _static(m),
    )[1],
    "codex.foreign_keys": lambda h, m: (
        _write(
            h / ".codex/config.toml",
            'model = "o3"\nANTHROPIC_BASE_URL = "https://gw.example/api"\n',
        ),
        _static(m),
    )[1],
    "gemini.auth_type_missing": lambda h, m: (
        _write(h / ".gemini/.env", "GEMINI_API_KEY=AIzaSyExampleExampleExample01\n"),
        _write(h / ".gemini/trustedFolders.json", json.dumps({str(Path.cwd()): "TRUST_FOLDER"})),
        _static(m),
    )[2],
    "gemini.untrusted_folder": lambda h, m: (
        _write(h / ".gemini/.env", "GOOGLE_GEMINI_BASE_URL=https://gw.example/api\n"),
        _write(h / ".gemini/trustedFolders.json", json.dumps({str(Path.cwd()): "DO_NOT_TRUST"})),
        _static(m),
    )[2],
    "env.guide_var_mismatch": lambda h, m: guide_var_findings(  # the root where /v1 belongs
        Profile("taotoken", "https://taotoken.net/api", key_env="HOME"),
        {"TAOTOKEN_BASE_URL": "https://taotoken.net/api"},
    ),
    "hosts.inconsistent": lambda h, m: profile_findings(
        Profile(
            "split",
            "https://gw.example/api",
            key_env="HOME",
            overrides={"codex": ClientOverride(base_url="https://other.example/v1")},
        )
    ),
    "ledger.usage_missing": lambda h, m: audit_ledger(
        _ledger(
            h,
            [
                OK_ROW,
                {
                    **OK_ROW,
                    "sample": 1,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "total_tokens": 0,
                },
            ],
        )
    ),
    "ledger.total_mismatch": lambda h, m: audit_ledger(
        _ledger(h, [{**OK_ROW, "total_tokens": 99}])
    ),
    "ledger.unknown_model": lambda h, m: audit_ledger(
        _ledger(h, [OK_ROW, {**OK_ROW, "sample": 1, "model": "gpt-fallback"}]),
        expect_models=["gpt-strict"],
    ),
    "ledger.duplicate": lambda h, m: audit_ledger(_ledger(h, [OK_ROW, OK_ROW])),
    "ledger.errors": lambda h, m: audit_ledger(
        _ledger(
            h,
            [
                OK_ROW,
                {
                    **OK_ROW,
                    "sample": 1,
                    "status": "error",
                    "error_class": "RateLimitError",
                    "http_status": 429,
                },
            ],
        )
    ),
    "ledger.base_urls": lambda h, m: audit_ledger(
        _ledger(h, [OK_ROW, {**OK_ROW, "sample": 1, "base_url": "http://127.0.0.1:9/api/v1"}])
    ),
    "config.unreadable": lambda h, m: (
        _write(h / ".claude/settings.json", '{"env": {"ANTHROPIC_BASE_URL": }'),
        _static(m),
    )[1],
}


def _adhoc_ok() -> list[Finding]:
    from eloledger.doctor.run import run_adhoc

    with serve(GatewayConfig()) as gw:
        env = {"GW_KEY": GOOD_KEY}
        return run_adhoc(gw.v1, "openai-chat", "GW_KEY", model="gpt-strict", env=env).findings


def test_every_documented_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(CODES)


@pytest.mark.parametrize("code", sorted(CODES))
def test_code_is_triggered(code: str, temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    findings = SCENARIOS[code](temp_home, monkeypatch)
    matching = [f for f in findings if f.code == code]
    assert matching, f"{code} not triggered; got {[f.code for f in findings]}"
    finding = matching[0]
    assert finding.severity == CODES[code][0]
    assert finding.message and finding.evidence and finding.fix
    assert GOOD_KEY not in json.dumps([f.to_dict() for f in findings])
