"""Static checks: the value each client really uses, its evidence (file:line / variable), no keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.doctor.static import is_placeholder, profile_findings, static_findings
from eloledger.profiles.model import ClientOverride, Profile


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


_GEMINI_TRUST_VARS = (
    "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_RESTRICTED_MODE",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
)


@pytest.fixture(autouse=True)
def _no_gemini_trust_overrides(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folder trust is decided by the files each test writes, not by the machine."""
    for var in _GEMINI_TRUST_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(temp_home / "no-system.json"))


def _trust(home: Path, folder: Path, level: str = "TRUST_FOLDER") -> None:
    _write(home / ".gemini/trustedFolders.json", json.dumps({str(folder): level}))


def _by_code(findings: list) -> dict:
    out: dict = {}
    for f in findings:
        out.setdefault(f.code, []).append(f)
    return out


@pytest.mark.parametrize(
    "key",
    [
        "YOUR_API_KEY",
        "<your-key>",
        "sk-xxxxxxxx",
        "sk-...",
        "your-api-key-here",
        "${OPENAI_API_KEY}",
        "changeme",
        "INSERT_YOUR_KEY_HERE",
        "sk-your-key",
    ],
)
def test_placeholders_are_recognised(key: str) -> None:
    assert is_placeholder(key)


@pytest.mark.parametrize(
    "key",
    [
        "sk-proj-8fJ2kLm9QwErTyUiOp",
        "sk-ant-api03-AbCdEf123456",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "gsk_4f9a8b7c6d5e",
    ],
)
def test_real_looking_keys_are_not_placeholders(key: str) -> None:
    assert not is_placeholder(key)


def test_clean_setup_gives_no_findings(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(
        temp_home / ".claude/settings.json",
        json.dumps(
            {
                "env": {
                    "ANTHROPIC_BASE_URL": "https://gw.example/api",
                    "ANTHROPIC_AUTH_TOKEN": "sk-gw-0123456789abcdef",
                }
            }
        ),
    )
    _write(
        temp_home / ".codex/config.toml",
        'model_provider = "gw"\n[model_providers.gw]\n'
        'base_url = "https://gw.example/api/v1"\nenv_key = "GW_KEY"\nwire_api = "responses"\n',
    )
    _write(
        temp_home / ".gemini/.env",
        "GEMINI_API_KEY=AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY\n"
        "GOOGLE_GEMINI_BASE_URL=https://gw.example/api\n",
    )
    _write(
        temp_home / ".gemini/settings.json",
        '{"security": {"auth": {"selectedType": "gemini-api-key"}}}',
    )
    _trust(temp_home, Path.cwd())
    monkeypatch.setenv("GW_KEY", "sk-gw-0123456789abcdef")
    assert static_findings() == []


def test_same_value_in_two_places_is_not_a_shadow(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        temp_home / ".claude/settings.json",
        '{"env": {"ANTHROPIC_BASE_URL": "https://gw.example", '
        '"ANTHROPIC_AUTH_TOKEN": "sk-abcdef0123456789"}}',
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gw.example")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-abcdef0123456789")
    codes = _by_code(static_findings())
    assert "env.shadowed" not in codes


def test_gemini_empty_process_var_hides_the_dotenv_value(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(temp_home / ".gemini/.env", "GOOGLE_GEMINI_BASE_URL=https://gw.example\n")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "")
    finding = _by_code(static_findings())["env.empty_base_url"][0]
    assert finding.target == "gemini-cli"
    assert "~/.gemini/.env:1" in finding.message and "ignored" in finding.message
    assert finding.fix.startswith("unset GOOGLE_GEMINI_BASE_URL")


def test_both_anthropic_vars_across_settings_and_shell(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        temp_home / ".claude/settings.json",
        '{\n "env": {\n  "ANTHROPIC_AUTH_TOKEN": "sk-token-0123456789"\n }\n}\n',
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-apikey-0123456789")
    findings = static_findings()
    found = _by_code(findings)["auth.both_anthropic_vars"]
    both = [f for f in found if f.target == "claude-code"][0]
    assert "~/.claude/settings.json:3 env.ANTHROPIC_AUTH_TOKEN" in both.evidence
    assert "$ANTHROPIC_API_KEY (process env)" in both.evidence
    text = json.dumps([f.to_dict() for f in findings])
    assert "sk-token-0123456789" not in text and "sk-apikey-0123456789" not in text


def test_api_key_helper_counts_as_a_key(temp_home: Path) -> None:
    _write(
        temp_home / ".claude/settings.json",
        '{"apiKeyHelper": "~/bin/key.sh", "env": {"ANTHROPIC_BASE_URL": "https://gw.example"}}',
    )
    assert "auth.missing_key" not in _by_code(static_findings())


def test_codex_ignores_openai_base_url_for_custom_provider(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        temp_home / ".codex/config.toml",
        'model_provider = "gw"\n\n[model_providers.gw]\n'
        'base_url = "https://gw.example/v1"\nenv_key = "GW_KEY"\nwire_api = "responses"\n',
    )
    monkeypatch.setenv("GW_KEY", "sk-gw-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://other.example/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-0123456789")
    shadow = [f for f in _by_code(static_findings())["env.shadowed"] if f.target == "codex"][0]
    assert "ignored by a custom provider" in shadow.message
    assert "edit ~/.codex/config.toml:4" in shadow.fix


def test_codex_url_checks_and_line_numbers(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        temp_home / ".codex/config.toml",
        '# comment\nmodel_provider = "gw"\n\n'
        '[model_providers.gw]\nname = "gw"\nbase_url = "https://gw.example/api"\n'
        'env_key = "GW_KEY"\nwire_api = "chat"\n',
    )
    monkeypatch.setenv("GW_KEY", "sk-gw-0123456789")
    codes = _by_code(static_findings())
    assert codes["codex.wire_api_chat"][0].evidence == "~/.codex/config.toml:8"
    missing = codes["url.missing_v1"][0]
    assert missing.target == "codex" and missing.fix == "use https://gw.example/api/v1"
    assert missing.evidence.startswith("~/.codex/config.toml:6")


def test_gemini_selected_type_present_is_clean(temp_home: Path) -> None:
    _write(temp_home / ".gemini/.env", "GEMINI_API_KEY=AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY\n")
    _trust(temp_home, Path.cwd().parent / "sibling", "TRUST_PARENT")
    _write(
        temp_home / ".gemini/settings.json",
        '{"security": {"auth": {"selectedType": "oauth-personal"}}}',
    )
    finding = _by_code(static_findings())["gemini.auth_type_missing"][0]
    assert "oauth-personal" in finding.evidence
    _write(
        temp_home / ".gemini/settings.json",
        '{"security": {"auth": {"selectedType": "gemini-api-key"}}}',
    )
    assert static_findings() == []


def test_profile_root_problems_and_key_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", " sk-gw-0123456789abc")
    profile = Profile(
        "gw", "https://gw.example/api/v1/chat/completions?utm_source=guide", key_env="GW_KEY"
    )
    codes = _by_code(profile_findings(profile))
    assert codes["url.query_string"][0].target == "profile:gw"
    assert codes["url.endpoint_path"][0].fix == "use https://gw.example/api"
    assert codes["auth.key_whitespace"][0].evidence == "$GW_KEY"
    assert "url.extra_v1" not in codes  # a root with /v1 is fine: each client URL is derived


def test_profile_override_checked_for_its_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", "sk-gw-0123456789abc")
    profile = Profile(
        "gw",
        "https://gw.example/api",
        key_env="GW_KEY",
        overrides={"codex": ClientOverride(base_url="https://gw.example/api")},
    )
    codes = _by_code(profile_findings(profile))
    assert codes["url.missing_v1"][0].target == "profile:gw/codex"
    assert "hosts.inconsistent" not in codes


GEMINI_ENV = (
    "GEMINI_API_KEY=AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY\n"
    "GOOGLE_GEMINI_BASE_URL=https://gw.example/api\n"
    "GEMINI_MODEL=gemini-gw\n"
)
GEMINI_SETTINGS = '{"security": {"auth": {"selectedType": "gemini-api-key"}}}'


def test_untrusted_folder_ignores_the_gemini_dotenv(temp_home: Path) -> None:
    _write(temp_home / ".gemini/.env", GEMINI_ENV)
    _write(temp_home / ".gemini/settings.json", GEMINI_SETTINGS)
    findings = static_findings()
    assert [f.code for f in findings] == ["gemini.untrusted_folder"]
    finding = findings[0]
    assert finding.severity == "warning" and finding.target == "gemini-cli"
    assert str(Path.cwd()) in finding.message
    assert finding.evidence == (
        "~/.gemini/.env:1 GEMINI_API_KEY, ~/.gemini/.env:2 GOOGLE_GEMINI_BASE_URL, "
        f"~/.gemini/.env:3 GEMINI_MODEL; ~/.gemini/trustedFolders.json: no rule covers {Path.cwd()}"
    )
    assert "exit 41" in finding.message
    assert "gemini --skip-trust" in finding.fix
    assert f'"{Path.cwd()}": "TRUST_FOLDER"' in finding.fix
    assert 'eval "$(eloledger env PROFILE)"' in finding.fix
    assert "AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY" not in json.dumps(finding.to_dict())


@pytest.mark.parametrize(
    ("rules", "env", "untrusted"),
    [
        ({"{cwd}": "TRUST_FOLDER"}, {}, False),
        ({"{cwd}/child": "TRUST_PARENT"}, {}, False),
        ({"{parent}": "TRUST_FOLDER", "{cwd}": "DO_NOT_TRUST"}, {}, True),
        ({"{parent}": "DO_NOT_TRUST", "{cwd}": "TRUST_FOLDER"}, {}, False),
        ({"{cwd}": "DO_NOT_TRUST"}, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}, False),
        ({"{cwd}": "TRUST_FOLDER"}, {"GEMINI_CLI_TRUST_WORKSPACE": "false"}, True),
        ({}, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}, False),
    ],
)
def test_untrusted_folder_follows_gemini_trust_rules(
    temp_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    rules: dict[str, str],
    env: dict[str, str],
    untrusted: bool,
) -> None:
    cwd = Path.cwd()
    _write(temp_home / ".gemini/.env", GEMINI_ENV)
    _write(temp_home / ".gemini/settings.json", GEMINI_SETTINGS)
    resolved = {k.format(cwd=cwd, parent=cwd.parent): v for k, v in rules.items()}
    _write(temp_home / ".gemini/trustedFolders.json", json.dumps(resolved))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    codes = [f.code for f in static_findings()]
    assert codes == (["gemini.untrusted_folder"] if untrusted else [])


def test_trust_disabled_in_settings_reads_the_gemini_dotenv(temp_home: Path) -> None:
    _write(temp_home / ".gemini/.env", GEMINI_ENV)
    _write(
        temp_home / ".gemini/settings.json",
        '{\n  // trust off\n  "security": {"folderTrust": {"enabled": false},\n'
        '  "auth": {"selectedType": "gemini-api-key"}}\n}\n',
    )
    assert static_findings() == []


def test_untrusted_plain_dotenv_base_url_is_ignored_but_key_is_read(temp_home: Path) -> None:
    work = Path.cwd()
    _write(work / ".env", "GOOGLE_GEMINI_BASE_URL=https://gw.example/api\nGEMINI_API_KEY=AIzaK1\n")
    _write(temp_home / ".gemini/settings.json", GEMINI_SETTINGS)
    findings = static_findings()
    assert [f.code for f in findings] == ["gemini.untrusted_folder"]
    assert findings[0].evidence.startswith(f"{work}/.env:1 GOOGLE_GEMINI_BASE_URL; ~/.gemini/")
    assert "GEMINI_API_KEY" not in findings[0].message and "exit 55" in findings[0].message


def test_broken_trusted_folders_file_is_reported(temp_home: Path) -> None:
    _write(temp_home / ".gemini/trustedFolders.json", '{"/x": "TRUST_EVERYTHING"}')
    findings = static_findings()
    assert [f.code for f in findings] == ["config.unreadable"]
    assert "refuses to start" in findings[0].message
    assert "TRUST_EVERYTHING" in findings[0].evidence
