"""claude-code-router: a preset with its wire, port and model naming, and a Claude-only
profile that takes the anthropic wire, so the doctor never probes chat completions on a gateway
that serves only ``/v1/messages`` (docs/observed/gateways.md, ccr 2.0.0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eloledger.profiles.presets import PRESETS
from eloledger.profiles.store import get_profile
from runner_cli import env
from strict_gateway import GOOD_KEY, GatewayConfig, serve


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", *args],
        capture_output=True, text=True, env=env(GOOD_KEY), timeout=60,
    )  # fmt: skip


def test_the_ccr_preset_speaks_anthropic_on_its_port_with_provider_model_names() -> None:
    preset = PRESETS["claude-code-router"]
    preset.validate()
    assert (preset.base_url, preset.wire_api, preset.auth) == (
        "http://127.0.0.1:3456",
        "anthropic",
        "bearer",
    )
    assert set(preset.clients) == {"claude-code", "anthropic"}
    assert preset.client_base_url("claude-code") == "http://127.0.0.1:3456"
    assert "provider,model" in preset.description and "Router.default" in preset.description


def test_profile_add_from_the_preset_keeps_a_provider_model_name(tmp_path: Path) -> None:
    done = _cli("profile", "add", "ccr", "--preset", "claude-code-router", "--model",
                "sim,sim-small")  # fmt: skip
    assert done.returncode == 0, done.stderr
    exported = _cli("env", "ccr").stdout
    assert "export ANTHROPIC_BASE_URL=http://127.0.0.1:3456" in exported
    assert "export ANTHROPIC_MODEL=sim,sim-small" in exported
    assert "OPENAI_BASE_URL=" not in exported.split("unset")[0]


def test_a_claude_only_profile_takes_the_anthropic_wire_and_the_doctor_passes(
    tmp_path: Path,
) -> None:
    with serve(GatewayConfig()) as gw:
        done = _cli("profile", "add", "ccr", "--base-url", gw.root, "--key-env", "STRICT_KEY",
                    "--clients", "claude-code", "--model", "claude-strict")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert get_profile("ccr").wire_api == "anthropic"
        doctor = _cli("doctor", "--profile", "ccr")
        paths = {r.path for r in gw.requests}
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "/v1/messages" in paths and "/v1/chat/completions" not in paths


def test_an_explicit_wire_is_kept_for_a_claude_only_profile() -> None:
    done = _cli("profile", "add", "x", "--base-url", "http://127.0.0.1:3456", "--key-env",
                "STRICT_KEY", "--clients", "claude-code", "--wire-api", "openai-chat")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert get_profile("x").wire_api == "openai-chat"
