"""`eloledger doctor` as a new user runs it, following the popular setup guides' advice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.cli import main
from strict_gateway import GOOD_KEY, GatewayConfig, serve


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _run_json(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, list[dict]]:
    status = main(["doctor", "--format", "json", "--timeout", "2", *args])
    out = capsys.readouterr().out
    assert GOOD_KEY not in out
    return status, json.loads(out)["findings"]


def _find(findings: list[dict], code: str, target_prefix: str = "") -> dict:
    matching = [f for f in findings if f["code"] == code and f["target"].startswith(target_prefix)]
    assert matching, (
        f"{code} ({target_prefix}) not in {[(f['code'], f['target']) for f in findings]}"
    )
    return matching[0]


def test_guide_says_leave_v1_off_for_the_openai_sdk(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(GatewayConfig(prefix="/api")) as gw:
        monkeypatch.setenv("OPENAI_BASE_URL", gw.root)
        monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
        status, findings = _run_json(capsys)
    assert status == 2
    static = _find(findings, "url.missing_v1", "openai")
    assert static["evidence"] == "$OPENAI_BASE_URL (process env)"
    assert static["fix"] == f"use {gw.v1}"
    live = _find(findings, "path.not_found", "openai")
    assert live["fix"] == f"use the base URL {gw.v1}"
    assert set(findings[0]) == {"code", "severity", "target", "message", "evidence", "fix"}


def test_guide_says_wire_api_chat_for_codex(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, temp_home: Path
) -> None:
    _write(
        temp_home / ".codex/config.toml",
        'model = "gpt-strict"\nmodel_provider = "gw"\n\n'
        '[model_providers.gw]\nname = "My gateway"\nbase_url = "https://gw.example/v1"\n'
        'env_key = "GW_KEY"\nwire_api = "chat"\n',
    )
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    status, findings = _run_json(capsys, "--offline")
    assert status == 2
    finding = _find(findings, "codex.wire_api_chat")
    assert finding["evidence"] == "~/.codex/config.toml:8"
    assert finding["fix"].startswith('set wire_api = "responses" in [model_providers.gw]')


def test_guide_sets_both_anthropic_variables(
    capsys: pytest.CaptureFixture, temp_home: Path
) -> None:
    with serve(GatewayConfig()) as gw:
        _write(
            temp_home / ".claude/settings.json",
            json.dumps(
                {
                    "env": {
                        "ANTHROPIC_BASE_URL": gw.root,
                        "ANTHROPIC_AUTH_TOKEN": GOOD_KEY,
                        "ANTHROPIC_API_KEY": GOOD_KEY,
                        "ANTHROPIC_MODEL": "claude-strict",
                    }
                },
                indent=2,
            ),
        )
        status, findings = _run_json(capsys)
        assert any(r.path == "/v1/messages" for r in gw.requests)  # the live probe ran
    assert status == 1  # a warning: the gateway still answers
    finding = _find(findings, "auth.both_anthropic_vars", "claude-code")
    assert "both headers" in finding["message"]
    assert "settings.json:4 env.ANTHROPIC_AUTH_TOKEN" in finding["evidence"]
    assert {f["code"] for f in findings} == {"auth.both_anthropic_vars", "probe.ok"}


def test_tracking_query_string_pasted_into_the_url(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig()) as gw:
        status, findings = _run_json(
            capsys,
            "--url",
            gw.v1 + "?utm_source=blog",
            "--wire",
            "openai-chat",
            "--key-env",
            "GW_KEY",
        )
    assert status == 2
    assert _find(findings, "url.query_string")["fix"] == f"use {gw.v1}"
    assert _find(findings, "path.not_found")["fix"] == f"use the base URL {gw.v1}"


def test_profile_probes_each_wire_it_is_used_with(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eloledger.profiles.model import Profile
    from eloledger.profiles.store import save_profile

    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig(prefix="/api", header_forms=frozenset({"x-api-key"}))) as gw:
        save_profile(
            Profile(
                "gw",
                gw.root,
                key_env="GW_KEY",
                model="claude-strict",
                wire_api="anthropic",
                clients=["claude-code", "codex"],
            )
        )
        status = main(["doctor", "--profile", "gw", "--timeout", "2"])
        out = capsys.readouterr().out
        paths = {r.path for r in gw.requests}
    assert status == 2
    assert "/api/v1/messages" in paths and "/api/v1/models" in paths
    assert "ERROR   auth.header_form  [profile:gw (anthropic)]" in out
    assert "ERROR   auth.header_form  [profile:gw (openai-responses)]" in out
    assert "env_http_headers" in out  # the Codex fix for an x-api-key gateway
    assert "probe FAILED: profile:gw anthropic" in out
    assert GOOD_KEY not in out


def test_healthy_profile_exits_zero(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eloledger.profiles.model import Profile
    from eloledger.profiles.store import save_profile

    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    with serve(GatewayConfig()) as gw:
        save_profile(Profile("ok", gw.root, key_env="GW_KEY", model="gpt-strict"))
        status = main(["doctor", "--profile", "ok", "--timeout", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert "no problems found" in out
    assert "usage 9+1=10" in out


def test_warnings_only_exit_one_and_text_layout(
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, temp_home: Path
) -> None:
    _write(temp_home / ".claude/settings.json", '{"env": {"ANTHROPIC_MODEL": "model-a"}}')
    monkeypatch.setenv("ANTHROPIC_MODEL", "model-b")
    assert main(["doctor", "--offline"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "WARNING env.shadowed  [claude-code]"
    assert "        fix: set ANTHROPIC_MODEL at ~/.claude/settings.json:1" in out
    assert out.rstrip().endswith("0 errors, 1 warning, 0 info")


def test_ledger_audit_from_the_cli(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    row = {
        "task_id": "t",
        "arm": "a",
        "sample": 0,
        "model": "m",
        "status": "ok",
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "total_tokens": 2,
    }
    ledger = _write(
        tmp_path / "l.jsonl",
        json.dumps(row) + "\n" + json.dumps({**row, "sample": 1, "model": "other"}) + "\n",
    )
    status, findings = _run_json(capsys, "--offline", "--ledger", str(ledger), "--model", "m")
    assert status == 1
    assert [f["code"] for f in findings] == ["ledger.unknown_model"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--url", "https://x.example/v1"], "--url needs --wire and --key-env"),
        (
            [
                "--url",
                "https://x.example/v1",
                "--wire",
                "gemini",
                "--key-env",
                "K",
                "--profile",
                "p",
            ],
            "exclude each other",
        ),
        (["--key-env", "K"], "--key-env and --auth go with --url"),
        (["--profile", "nope", "--offline"], "unknown profile 'nope'"),
        (["--timeout", "0"], "must be positive"),
        (["--wire", "smtp"], "invalid choice"),
    ],
)
def test_bad_arguments_one_line_exit_two(
    capsys: pytest.CaptureFixture, args: list[str], needle: str
) -> None:
    with pytest.raises(SystemExit) if "--wire" in args and "smtp" in args else _nullcontext():
        status = main(["doctor", *args])
        assert status == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_real_subprocess_offline_json(temp_home: Path) -> None:
    env = {k: v for k, v in os.environ.items()}
    env["OPENAI_BASE_URL"] = ""
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "doctor", "--offline", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    codes = [f["code"] for f in json.loads(done.stdout)["findings"]]
    assert codes == ["env.empty_base_url"]
