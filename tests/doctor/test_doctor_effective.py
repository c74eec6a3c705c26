"""Effective settings per client: each client's precedence, the source of each value, masking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger import clientfacts
from eloledger.doctor.effective import UNTRUSTED_NOTE, collect, effective_settings


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def _no_gemini_trust_overrides(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folder trust is decided by the files each test writes, not by the machine."""
    for var in (
        "GEMINI_CLI_TRUST_WORKSPACE",
        "GEMINI_RESTRICTED_MODE",
        "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(temp_home / "no-system.json"))


def _trust(home: Path, rules: dict[str, str]) -> None:
    _write(home / ".gemini/trustedFolders.json", json.dumps(rules, indent=2))


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
    base = _get(settings, "claude-code", "ANTHROPIC_BASE_URL")
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
    token = _get(settings, "claude-code", "ANTHROPIC_AUTH_TOKEN")
    assert token.source.label == "$ANTHROPIC_AUTH_TOKEN (process env)"
    assert token.secret and token.value == "sk-she…(21 chars)"
    assert _get(settings, "claude-code", "ANTHROPIC_MODEL").value == "m-user"
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
    base = _get(effective_settings(), "claude-code", "ANTHROPIC_BASE_URL")
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
    _trust(temp_home, {str(Path.cwd()): "TRUST_FOLDER"})
    eff = collect()
    base = eff.get("gemini-cli", "GOOGLE_GEMINI_BASE_URL")
    assert base.raw == "" and base.source.label == "$GOOGLE_GEMINI_BASE_URL (process env)"
    assert base.shadowed[0].value == "https://dotenv.example"
    assert base.shadowed[0].line == 2
    assert eff.get("gemini-cli", "GEMINI_MODEL").value == "gemini-x"


def test_gemini_only_the_first_dotenv_found_is_read(temp_home: Path) -> None:
    work = Path.cwd()
    _write(work / ".gemini/.env", "GEMINI_MODEL=from-project\n")
    _write(temp_home / ".gemini/.env", "GEMINI_API_KEY=AIzaHomeHomeHomeHomeHome00\n")
    _trust(temp_home, {str(work): "TRUST_FOLDER"})
    eff = collect()
    assert eff.get("gemini-cli", "GEMINI_MODEL").value == "from-project"
    key = eff.get("gemini-cli", "GEMINI_API_KEY")
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
    selected = eff.get("gemini-cli", "security.auth.selectedType")
    assert selected is not None and selected.value == "gemini-api-key"
    assert selected.source.label.endswith(".gemini/settings.json:3 security.auth.selectedType")
    assert [(p.code, p.evidence) for p in eff.problems] == [
        ("config.unreadable", "~/.claude/settings.json:2:3")
    ]


# --- Gemini CLI folder trust ------------------------------------------------------------------

HOME_GEMINI_ENV = (
    "GEMINI_API_KEY=AIzaGeminiDirGeminiDir0001\nGOOGLE_GEMINI_BASE_URL=https://gw.example\n"
)
HOME_PLAIN_ENV = "GEMINI_API_KEY='AIza Plain!Key'\nGOOGLE_GEMINI_BASE_URL=https://plain.example\n"


def _trust_setups(home: Path, work: Path) -> dict[str, tuple]:
    """name -> (trustedFolders rules, extra env, user settings, expected trust)."""
    on = '{"security": {"auth": {"selectedType": "gemini-api-key"}}}'
    off = '{"security": {"folderTrust": {"enabled": false}}}'
    return {
        "no rule": ({}, {}, on, False),
        "TRUST_FOLDER": ({str(work): "TRUST_FOLDER"}, {}, on, True),
        "TRUST_PARENT": ({str(work / "sub"): "TRUST_PARENT"}, {}, on, True),
        "TRUST_PARENT of a sibling": ({str(work.parent / "x"): "TRUST_PARENT"}, {}, on, True),
        "TRUST_FOLDER on a child only": ({str(work / "sub"): "TRUST_FOLDER"}, {}, on, False),
        "DO_NOT_TRUST": ({str(work): "DO_NOT_TRUST"}, {}, on, False),
        "longest match: DO_NOT_TRUST inside a trusted parent": (
            {str(work.parent): "TRUST_FOLDER", str(work): "DO_NOT_TRUST"},
            {},
            on,
            False,
        ),
        "longest match: trusted inside DO_NOT_TRUST": (
            {str(work.parent): "DO_NOT_TRUST", str(work): "TRUST_FOLDER"},
            {},
            on,
            True,
        ),
        "disabled in settings": ({}, {}, off, None),
        "env true beats DO_NOT_TRUST": (
            {str(work): "DO_NOT_TRUST"},
            {"GEMINI_CLI_TRUST_WORKSPACE": "true"},
            on,
            True,
        ),
        "env false beats TRUST_FOLDER": (
            {str(work): "TRUST_FOLDER"},
            {"GEMINI_CLI_TRUST_WORKSPACE": "false"},
            on,
            False,
        ),
        "restricted mode": ({}, {"GEMINI_RESTRICTED_MODE": "true"}, off, False),
    }


SETUP_NAMES = list(_trust_setups(Path("/h"), Path("/w/x")))


@pytest.mark.parametrize("setup", SETUP_NAMES)
def test_gemini_dotenv_follows_folder_trust(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch, setup: str
) -> None:
    work = Path.cwd()
    rules, env, user_settings, expected = _trust_setups(temp_home, work)[setup]
    _trust(temp_home, rules)
    _write(temp_home / ".gemini/settings.json", user_settings)
    _write(temp_home / ".gemini/.env", HOME_GEMINI_ENV)
    _write(temp_home / ".env", HOME_PLAIN_ENV)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert clientfacts.gemini_folder_trusted() is expected
    eff = collect()
    key = eff.get("gemini-cli", "GEMINI_API_KEY")
    base = eff.get("gemini-cli", "GOOGLE_GEMINI_BASE_URL")
    if expected is False:
        # ~/.gemini/.env is skipped; from ~/.env only the key, stripped of unsafe characters
        assert key.raw == "AIzaPlainKey" and key.source.label == "~/.env:1 GEMINI_API_KEY"
        assert key.shadowed[0].label == f"~/.gemini/.env:1 GEMINI_API_KEY ({UNTRUSTED_NOTE})"
        assert base.value is None and base.source.label == "$GOOGLE_GEMINI_BASE_URL (unset)"
        assert [s.value for s in base.shadowed] == ["https://gw.example", "https://plain.example"]
        assert all(UNTRUSTED_NOTE in s.label for s in base.shadowed)
        assert "only GEMINI_API_KEY" in base.shadowed[1].label
    else:
        assert key.raw == "AIzaGeminiDirGeminiDir0001"
        assert key.source.label == "~/.gemini/.env:1 GEMINI_API_KEY"
        assert base.value == "https://gw.example"
        assert "earlier .env was found first" in base.shadowed[0].label
    assert not any(p.code == "config.unreadable" for p in eff.problems)
    assert "AIzaGeminiDirGeminiDir0001" not in repr(eff.settings)


def test_gemini_trusted_folders_path_can_be_moved(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = _write(
        temp_home / "elsewhere/trust.json", json.dumps({str(Path.cwd()): "TRUST_FOLDER"})
    )
    assert clientfacts.gemini_folder_trusted() is False
    monkeypatch.setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", str(moved))
    assert clientfacts.gemini_folder_trusted() is True


def test_gemini_trust_follows_symlinks(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI compares real paths: trusting the real folder trusts a link to it."""
    link = temp_home / "link"
    link.symlink_to(Path.cwd(), target_is_directory=True)
    _trust(temp_home, {str(Path.cwd()): "TRUST_FOLDER"})
    assert clientfacts.gemini_folder_trusted(cwd=link) is True


def test_broken_trusted_folders_file_is_a_problem(temp_home: Path) -> None:
    _write(temp_home / ".gemini/trustedFolders.json", '{"/x": "TRUST_FOLDER",,}')
    _write(temp_home / ".gemini/.env", HOME_GEMINI_ENV)
    eff = collect()
    assert eff.gemini_trust is not None and eff.gemini_trust.error
    (problem,) = eff.problems
    assert problem.code == "config.unreadable"
    assert problem.target == "~/.gemini/trustedFolders.json"
    assert "does not parse as JSON" in problem.evidence
