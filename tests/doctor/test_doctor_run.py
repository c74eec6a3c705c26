"""run_doctor without a profile probes what the live client configs point at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.doctor.run import run_doctor
from strict_gateway import GOOD_KEY, GatewayConfig, serve


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _configure_all_clients(home: Path, root: str) -> None:
    _write(
        home / ".claude/settings.json",
        json.dumps(
            {
                "env": {
                    "ANTHROPIC_BASE_URL": root,
                    "ANTHROPIC_AUTH_TOKEN": GOOD_KEY,
                    "ANTHROPIC_MODEL": "claude-strict",
                }
            }
        ),
    )
    _write(
        home / ".codex/config.toml",
        f'model = "gpt-strict"\nmodel_provider = "gw"\n'
        f'[model_providers.gw]\nbase_url = "{root}/v1"\nenv_key = "GW_KEY"\n'
        'wire_api = "responses"\n',
    )
    _write(
        home / ".gemini/.env",
        f"GEMINI_API_KEY={GOOD_KEY}\nGOOGLE_GEMINI_BASE_URL={root}\nGEMINI_MODEL=gemini-strict\n",
    )
    _write(
        home / ".gemini/settings.json", '{"security": {"auth": {"selectedType": "gemini-api-key"}}}'
    )
    # Gemini CLI reads ~/.gemini/.env only in a folder it trusts (the doctor runs in the cwd)
    _write(home / ".gemini/trustedFolders.json", json.dumps({str(Path.cwd()): "TRUST_FOLDER"}))


def test_live_configs_are_probed_on_their_own_wires(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig(prefix="/api")) as gw:
        _configure_all_clients(temp_home, gw.root)
        report = run_doctor(timeout=2)
        paths = {r.path for r in gw.requests}
    assert report.exit_status == 0
    assert sorted((f.code, f.target) for f in report.findings) == [
        ("probe.ok", "claude-code (anthropic)"),
        ("probe.ok", "codex (openai-responses)"),
        ("probe.ok", "gemini-cli (gemini)"),
    ]
    assert sorted((p.target.name, p.target.wire) for p in report.probes) == [
        ("claude-code", "anthropic"),
        ("codex", "openai-responses"),
        ("gemini-cli", "gemini"),
    ]
    assert all(p.usage and p.usage["total_tokens"] == 10 for p in report.probes)
    assert {
        "/api/v1/messages",
        "/api/v1/responses",
        "/api/v1beta/models/gemini-strict:streamGenerateContent",
    } <= paths


def test_offline_sends_nothing(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig(prefix="/api")) as gw:
        _configure_all_clients(temp_home, gw.root)
        report = run_doctor(offline=True)
        assert gw.requests == []
    assert report.probes == [] and report.exit_status == 0


def test_a_broken_client_does_not_hide_the_healthy_ones(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", "sk-not-the-right-key-000")
    with serve(GatewayConfig(prefix="/api")) as gw:
        _configure_all_clients(temp_home, gw.root)
        report = run_doctor(timeout=2)
    failed = {p.target.name for p in report.probes if not p.ok}
    assert failed == {"codex"}
    assert [(f.code, f.target) for f in report.findings] == [
        ("auth.unauthorized", "codex (openai-responses)"),
        ("probe.ok", "claude-code (anthropic)"),
        ("probe.ok", "gemini-cli (gemini)"),
    ]
    assert "$GW_KEY" in report.findings[0].fix
