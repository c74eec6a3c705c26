"""Effective settings per client: each client's precedence, the source of each value, masking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.doctor.effective import collect, effective_settings


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _get(settings: dict, client: str, name: str):  # noqa: ANN202
    matches = [s for s in settings[client] if s.name == name]
    assert matches, f"{client} has no {name}: {[s.name for s in settings[client]]}"
    return matches[0]


def test_claude_local_beats_project_beats_user_beats_shell(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = Path.cwd()
    _write(
        temp_home / ".claude/settings.json",
        json.dumps(
            {"env": {"ANTHROPIC_BASE_URL": "https://user.example", "ANTHROPIC_MODEL": "m-user"}},
            indent=2,
        ),
    )
    _write(
        work / ".claude/settings.json",
        json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://project.example"}}, indent=2),
    )
    _write(
        work / ".claude/settings.local.json",
        '{\n  "env": {\n    "ANTHROPIC_BASE_URL": "https://local.example"\n  }\n}\n',
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://shell.example")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "sk-shell-token-123456")
    settings = effective_settings()
    base = _get(settings, "claude", "ANTHROPIC_BASE_URL")
    assert base.value == "https://local.example"
    assert base.source.label.endswith(".claude/settings.local.json:3 env.ANTHROPIC_BASE_URL")
    assert [s.value for s in base.shadowed] == [
        "https://project.example",
        "https://user.example",
        "https://shell.example",
    ]
    assert "trusted workspaces" in base.shadowed[0].label
    assert base.shadowed[-1].label == "$ANTHROPIC_BASE_URL (process env)"
    # a variable missing from every settings env comes from the process env
    token = _get(settings, "claude", "ANTHROPIC_AUTH_TOKEN")
    assert token.source.label == "$ANTHROPIC_AUTH_TOKEN (process env)"
    assert token.secret and token.value == "sk-she…(21 chars)"
    assert _get(settings, "claude", "ANTHROPIC_MODEL").value == "m-user"
    # the SDK sees only the shell
    assert _get(settings, "anthropic", "ANTHROPIC_BASE_URL").value == "https://shell.example"


def test_claude_config_dir_moves_user_settings(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = temp_home / "elsewhere"
    _write(moved / "settings.json", '{"env": {"ANTHROPIC_BASE_URL": "https://moved.example"}}')
    _write(
        temp_home / ".claude/settings.json",
        '{"env": {"ANTHROPIC_BASE_URL": "https://default.example"}}',
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    base = _get(effective_settings(), "claude", "ANTHROPIC_BASE_URL")
    assert base.value == "https://moved.example" and base.shadowed == []


def test_codex_custom_provider_profile_file_and_ignored_openai_base_url(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        temp_home / ".codex/config.toml",
        """# my codex config
model = "gpt-5"
model_provider = "gw"

[model_providers.gw]
name = "Gateway"
base_url = "https://gw.example/v1"  # the gateway
env_key = "GW_KEY"
wire_api = "responses"

[mcp_servers.x]
command = "x"
""",
    )
    _write(temp_home / ".codex/fast.config.toml", 'model = "gpt-5-mini"\n')
    monkeypatch.setenv("OPENAI_BASE_URL", "https://ignored.example/v1")
    monkeypatch.setenv("GW_KEY", "sk-gw-secret-value-123")
    settings = effective_settings()
    base = _get(settings, "codex", "base_url")
    assert base.value == "https://gw.example/v1"
    assert base.source.label.endswith(".codex/config.toml:7 model_providers.gw.base_url")
    assert base.shadowed[0].label == "$OPENAI_BASE_URL (ignored by a custom provider)"
    key = _get(settings, "codex", "key")
    assert key.value == "sk-gw-…(22 chars)" and key.raw == "sk-gw-secret-value-123"
    assert "sk-gw-secret-value-123" not in repr(settings)
    fast_model = _get(settings, "codex@fast", "model")
    assert fast_model.value == "gpt-5-mini"
    assert fast_model.source.label.endswith("fast.config.toml:1 model")
    assert [s.value for s in fast_model.shadowed] == ["gpt-5"]
    assert _get(settings, "codex@fast", "base_url").value == "https://gw.example/v1"


def test_codex_builtin_openai_uses_openai_base_url(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1")
    settings = effective_settings()
    assert _get(settings, "codex", "model_provider").value == "openai"
    assert _get(settings, "codex", "base_url").value == "https://proxy.example/v1"


def test_gemini_process_env_beats_dotenv_even_when_empty(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        temp_home / ".gemini/.env",
        "# gemini\nexport GOOGLE_GEMINI_BASE_URL="
        "'https://dotenv.example'\nGEMINI_MODEL=gemini-x  # inline comment\n",
    )
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "")
    eff = collect()
    base = eff.get("gemini", "GOOGLE_GEMINI_BASE_URL")
    assert base.raw == "" and base.source.label == "$GOOGLE_GEMINI_BASE_URL (process env)"
    assert base.shadowed[0].value == "https://dotenv.example"
    assert base.shadowed[0].line == 2
    assert eff.get("gemini", "GEMINI_MODEL").value == "gemini-x"


def test_gemini_only_the_first_dotenv_found_is_read(temp_home: Path) -> None:
    work = Path.cwd()
    _write(work / ".gemini/.env", "GEMINI_MODEL=from-project\n")
    _write(temp_home / ".gemini/.env", "GEMINI_API_KEY=AIzaHomeHomeHomeHomeHome00\n")
    eff = collect()
    assert eff.get("gemini", "GEMINI_MODEL").value == "from-project"
    key = eff.get("gemini", "GEMINI_API_KEY")
    assert key.value is None  # in a later .env: never read
    assert "not read" in key.shadowed[0].label


def test_sdk_defaults_and_env(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = effective_settings()
    assert _get(settings, "openai", "OPENAI_BASE_URL").source.label == "built-in default"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-abcdefghijkl")
    assert _get(effective_settings(), "openai", "OPENAI_API_KEY").value == "sk-pro…(20 chars)"


def test_gemini_settings_with_comments_parse_but_claude_settings_do_not(temp_home: Path) -> None:
    """Gemini CLI strips // and /* */ comments from settings.json; Claude Code does not."""
    _write(
        temp_home / ".gemini/settings.json",
        '{\n  // picked by eloledger\n  "security": {"auth": {"selectedType": "gemini-api-key"}}'
        "\n  /* end */\n}\n",
    )
    _write(temp_home / ".claude/settings.json", '{\n  // no\n  "env": {}\n}\n')
    eff = collect()
    selected = eff.get("gemini", "security.auth.selectedType")
    assert selected is not None and selected.value == "gemini-api-key"
    assert selected.source.label.endswith(".gemini/settings.json:3 security.auth.selectedType")
    assert [(p.code, p.evidence) for p in eff.problems] == [
        ("config.unreadable", "~/.claude/settings.json:2:3")
    ]
