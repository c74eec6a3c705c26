"""Doctor fixes that are one-key config edits: diff touches only that key, backup, atomic, undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.doctor.findings import FixAction
from eloledger.doctor.fixes import apply_fix, plan_fix
from eloledger.doctor.static import static_findings
from eloledger.errors import UserError
from eloledger.profiles.backups import get_backup, list_backups
from eloledger.profiles.switch import restore


@pytest.fixture(autouse=True)
def _no_gemini_trust_overrides(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(temp_home / "no-system.json"))
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _only(code: str) -> object:
    found = [f for f in static_findings() if f.code == code]
    assert len(found) == 1, [f.code for f in static_findings()]
    return found[0]


def _changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """Lines only in old, lines only in new (the rest must be byte-identical)."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    return [x for x in a if x not in b], [x for x in b if x not in a]


SECRET = "sk-ant-secret-1234567890"
CODEX = """\
# my codex config: keep this comment
model = "gpt-5"   # inline comment kept
model_provider = "gw"

[model_providers.gw]
name = "Gateway"
base_url = "https://gw.example/v1"
env_key = "GW_KEY"
wire_api = "chat"  # was chat

[mcp_servers.x]
command = "x"
"""


def _fix_and_check(code: str, path: Path, removed: list[str], added: list[str]) -> str:
    """Apply the finding's action; assert only the target lines changed and the finding left."""
    finding = _only(code)
    assert finding.action is not None and finding.action.path == path
    assert list(finding.to_dict()) == ["code", "severity", "target", "message", "evidence", "fix"]
    old, new, diff = plan_fix(finding.action)
    assert old == path.read_text()
    assert _changed_lines(old, new) == (removed, added)
    shown = [f"-{x}" for x in removed] + [f"+{x}" for x in added]
    assert all(line in diff for line in shown if SECRET not in line)  # keys are masked
    assert SECRET not in diff
    assert path.read_text() == old  # planning writes nothing
    backup_id = apply_fix(finding.action, old)
    assert path.read_text() == new
    assert not any(f.code == code for f in static_findings())
    backup = get_backup(backup_id)
    assert backup.text_of(backup.files[0]) == old
    restore(None, backup_id)  # what 'eloledger profile restore ID' does
    assert path.read_text() == old
    return new


def test_codex_wire_api_chat_set_to_responses(temp_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GW_KEY", "sk-gw-1234567890abcdef")
    path = _write(temp_home / ".codex/config.toml", CODEX)
    _fix_and_check(
        "codex.wire_api_chat",
        path,
        ['wire_api = "chat"  # was chat\n'],
        ['wire_api = "responses"  # was chat\n'],
    )


def test_gemini_selected_type_added_keeping_comments(temp_home: Path) -> None:
    _write(temp_home / ".gemini/.env", "GEMINI_API_KEY=AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY\n")
    text = '{\n  // my comment\n  "theme": "Dracula",\n  "security": {"auth": {"useExternal": false}}\n}\n'
    path = _write(temp_home / ".gemini/settings.json", text)
    new = _fix_and_check(
        "gemini.auth_type_missing",
        path,
        ['  "security": {"auth": {"useExternal": false}}\n'],
        ['  "security": {"auth": {"useExternal": false, "selectedType": "gemini-api-key"}}\n'],
    )
    assert "// my comment" in new


def test_gemini_selected_type_creates_the_missing_settings_file(temp_home: Path) -> None:
    _write(temp_home / ".gemini/.env", "GEMINI_API_KEY=AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY\n")
    finding = _only("gemini.auth_type_missing")
    old, new, diff = plan_fix(finding.action)
    assert old is None and "/dev/null" in diff
    backup_id = apply_fix(finding.action, old)
    settings = temp_home / ".gemini/settings.json"
    assert json.loads(settings.read_text()) == {
        "security": {"auth": {"selectedType": "gemini-api-key"}}
    }
    assert not any(f.code == "gemini.auth_type_missing" for f in static_findings())
    restore(None, backup_id)
    assert not settings.exists()


CLAUDE = """\
{
  "permissions": {"allow": ["Bash(ls)"]},
  "env": {
    "ANTHROPIC_AUTH_TOKEN": "sk-ant-secret-1234567890",
    "ANTHROPIC_BASE_URL": "@URL@"
  },
  "model": "opus"
}
"""


def test_claude_extra_v1_url_fixed_and_token_masked_in_diff(temp_home: Path) -> None:
    path = _write(
        temp_home / ".claude/settings.json", CLAUDE.replace("@URL@", "https://gw.example/v1/")
    )
    finding = _only("url.extra_v1")
    _old, _new, diff = plan_fix(finding.action)
    assert "sk-ant-secret-1234567890" not in diff
    _fix_and_check(
        "url.extra_v1",
        path,
        ['    "ANTHROPIC_BASE_URL": "https://gw.example/v1/"\n'],
        ['    "ANTHROPIC_BASE_URL": "https://gw.example"\n'],
    )


def test_claude_empty_base_url_removed(temp_home: Path) -> None:
    path = _write(temp_home / ".claude/settings.json", CLAUDE.replace("@URL@", ""))
    new = _fix_and_check(
        "env.empty_base_url",
        path,
        [
            '    "ANTHROPIC_AUTH_TOKEN": "sk-ant-secret-1234567890",\n',
            '    "ANTHROPIC_BASE_URL": ""\n',
        ],
        ['    "ANTHROPIC_AUTH_TOKEN": "sk-ant-secret-1234567890"\n'],
    )
    assert json.loads(new)["env"] == {"ANTHROPIC_AUTH_TOKEN": "sk-ant-secret-1234567890"}


def test_codex_missing_v1_and_gemini_dotenv_trailing_slash(temp_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GW_KEY", "sk-gw-1234567890abcdef")
    codex = CODEX.replace('"chat"', '"responses"').replace("gw.example/v1", "gw.example")
    path = _write(temp_home / ".codex/config.toml", codex)
    _fix_and_check(
        "url.missing_v1",
        path,
        ['base_url = "https://gw.example"\n'],
        ['base_url = "https://gw.example/v1"\n'],
    )
    _write(
        temp_home / ".gemini/settings.json",
        '{"security":{"auth":{"selectedType":"gemini-api-key"}}}',
    )
    env = "# gemini\nGEMINI_API_KEY=AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY\n"
    dotenv = _write(
        temp_home / ".gemini/.env", env + "GOOGLE_GEMINI_BASE_URL=https://gw.example/\n"
    )
    _fix_and_check(
        "url.trailing_slash",
        dotenv,
        ["GOOGLE_GEMINI_BASE_URL=https://gw.example/\n"],
        ["GOOGLE_GEMINI_BASE_URL=https://gw.example\n"],
    )


def test_process_env_url_and_both_anthropic_vars_have_no_action(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://gw.example/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-1234567890abcdef")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-a-1234567890")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "sk-ant-b-1234567890")
    findings = static_findings()
    assert {f.code for f in findings} >= {"url.missing_v1", "auth.both_anthropic_vars"}
    assert all(f.action is None for f in findings)


def test_refuses_when_file_changed_since_plan_or_does_not_parse(temp_home: Path) -> None:
    path = _write(temp_home / ".codex/config.toml", CODEX)
    action = FixAction(path, "toml", ("model_providers", "gw", "wire_api"), "responses", "s")
    old, _new, _diff = plan_fix(action)
    path.write_text(CODEX + "# edited by hand\n")
    with pytest.raises(UserError, match="changed since"):
        apply_fix(action, old)
    assert path.read_text().endswith("# edited by hand\n")
    path.write_text("[model_providers.gw\nbroken")
    with pytest.raises(UserError, match="not valid TOML"):
        plan_fix(action)
    with pytest.raises(UserError, match="not valid TOML"):
        apply_fix(action)
    assert path.read_text() == "[model_providers.gw\nbroken"
    assert not list_backups()


def test_write_follows_a_symlink(temp_home: Path) -> None:
    real = _write(temp_home / "dotfiles/codex.toml", CODEX)
    link = temp_home / ".codex/config.toml"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    finding = _only("codex.wire_api_chat")
    apply_fix(finding.action)
    assert link.is_symlink() and 'wire_api = "responses"' in real.read_text()
