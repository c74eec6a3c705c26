"""The doctor on the mistakes the guides' readers make, each as the guide's reader makes it.

A key pasted into Codex's ``env_key`` (the guides' "most common error"), an endpoint URL pasted
whole into ``doctor --url``, a gateway root given for the OpenAI SDK, a base with /v1 for an
Anthropic client, a doubled /v1 for an OpenAI-style client.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from strict_gateway import GOOD_KEY, GatewayConfig, serve

PASTED = "sk-tt-9f3c2a7b1e8d4c6a0b5e7f9d2c4a6b8e"  # what the guide's reader pastes as env_key


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _doctor(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, list[dict], str]:
    status = main(["doctor", "--format", "json", "--timeout", "2", *args])
    out = capsys.readouterr().out
    return status, json.loads(out)["findings"], out


def test_a_key_pasted_as_env_key_is_masked_and_the_fix_names_a_variable(
    temp_home: Path, capsys: pytest.CaptureFixture
) -> None:
    _write(
        temp_home / ".codex" / "config.toml",
        'model_provider = "taotoken"\nmodel = "gpt-5"\n\n[model_providers.taotoken]\n'
        'name = "TaoToken"\nbase_url = "https://taotoken.example/v1"\n'
        f'env_key = "{PASTED}"\nwire_api = "responses"\n'
    )
    status, findings, out = _doctor(capsys, "--offline")
    assert PASTED not in out and PASTED[6:20] not in out  # never shown, not even in a fix
    (found,) = [f for f in findings if f["code"] == "codex.env_key_unset"]
    assert "sk-tt-" in found["message"] and "not a variable name" in found["message"]
    assert "variable NAME" in found["fix"] and "export" not in found["fix"].split("(")[0]
    assert status == 2


@pytest.mark.parametrize(
    ("wire", "typed", "code"),
    [
        ("openai-chat", "/api", "url.missing_v1"),  # the OpenAI SDK needs /api/v1
        ("anthropic", "/api/v1", "url.extra_v1"),  # /v1/v1/messages
        ("openai-chat", "/api/v1/v1", "url.extra_v1"),  # a doubled /v1 for the OpenAI SDK
        ("openai-chat", "/api/v1/chat/completions", "url.endpoint_path"),  # pasted endpoint
        ("anthropic", "/api/v1/messages", "url.endpoint_path"),
    ],
)
def test_the_url_is_checked_as_typed_offline(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, wire: str, typed: str, code: str
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    url = f"https://gw.example{typed}"
    status, findings, _ = _doctor(
        capsys, "--offline", "--url", url, "--wire", wire, "--key-env", "GW_KEY"
    )
    named = [f for f in findings if f["code"] == code]
    assert named, findings
    assert named[0]["evidence"] == f"--url {url}"
    assert status >= 1


def test_a_pasted_endpoint_is_probed_once_not_doubled(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig(prefix="/api")) as gw:
        url = gw.v1 + "/chat/completions"
        status, findings, _ = _doctor(
            capsys, "--url", url, "--wire", "openai-chat", "--key-env", "GW_KEY"
        )
        paths = [r.path for r in gw.requests]
    codes = {f["code"] for f in findings}
    assert codes == {"url.endpoint_path", "probe.ok"}, findings
    assert "/api/v1/chat/completions" in paths
    assert not any("completions/" in p for p in paths), paths
    assert status == 2  # the pasted URL would break the client it is pasted into


def test_claude_codes_variables_pasted_into_codex_config_are_flagged(
    temp_home: Path, capsys: pytest.CaptureFixture
) -> None:
    _write(
        temp_home / ".codex" / "config.toml",
        'model = "gpt-5"\nANTHROPIC_BASE_URL = "https://taotoken.example/api"\n'
        f'ANTHROPIC_AUTH_TOKEN = "{PASTED}"\n'
    )
    _, findings, out = _doctor(capsys, "--offline")
    (found,) = [f for f in findings if f["code"] == "codex.foreign_keys"]
    assert "ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN" in found["message"]
    assert found["evidence"].endswith("config.toml:2")
    assert PASTED not in out and PASTED[6:20] not in out


def _two_clients(home: Path, claude_url: str, codex_url: str) -> None:
    _write(home / ".claude" / "settings.json", json.dumps({"env": {"ANTHROPIC_BASE_URL": claude_url}}))
    _write(
        home / ".codex" / "config.toml",
        'model_provider = "gw"\n[model_providers.gw]\nname = "gw"\n'
        f'base_url = "{codex_url}"\nenv_key = "GW_KEY"\nwire_api = "responses"\n'
    )


@pytest.mark.parametrize("same", [True, False])
def test_every_clients_exit_host_is_the_same_across_live_configs(
    temp_home: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, same: bool
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    codex_host = "taotoken.example" if same else "other-relay.example"
    _two_clients(temp_home, "https://taotoken.example/api", f"https://{codex_host}/api/v1")
    _, findings, _ = _doctor(capsys, "--offline")
    mixed = [f for f in findings if f["code"] == "hosts.inconsistent"]
    if same:
        assert not mixed, mixed
        return
    (found,) = mixed
    assert "taotoken.example: claude-code" in found["evidence"]
    assert "other-relay.example: codex" in found["evidence"]


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://gw.example/api/v1/chat/completions", "url.endpoint_path"),
        ("https://gw.example/api/v1/messages", "url.endpoint_path"),
    ],
)
def test_profile_add_refuses_a_url_its_own_doctor_calls_an_error(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, url: str, code: str
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    status = main(["profile", "add", "gw", "--base-url", url, "--key-env", "GW_KEY"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert f"profile 'gw': {code}" in err and "fix: use https://gw.example/api" in err
    assert main(["profile", "list", "--format", "json"]) == 0
    assert "gw.example" not in capsys.readouterr().out  # nothing was saved
