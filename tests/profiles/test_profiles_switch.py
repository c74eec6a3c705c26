"""Switching on a HOME full of real-world configs: only owned keys change, nothing is lost."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
import tomlkit
from test_profiles_helpers import make_realistic_home, profile_a, profile_b, snapshot

from eloledger.errors import UserError
from eloledger.profiles import ownership, store
from eloledger.profiles.backups import list_backups
from eloledger.profiles.edit import envedit, jsonedit
from eloledger.profiles.switch import apply_switch, plan_switch, restore

ALL = "claude-code,codex,gemini-cli"
KEY_A = "sk-aaaa-0123456789abcdef"
KEY_B = "sk-bbbb-fedcba9876543210"
OWNED_LINE = re.compile(
    r'"(ANTHROPIC_[A-Z_]+|selectedType)"|^\s*(model_provider|model|GEMINI_[A-Z_]+|GOOGLE_GEMINI_BASE_URL)\s*='
)


@pytest.fixture
def home(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("GW_A_KEY", KEY_A)
    monkeypatch.setenv("GW_B_KEY", KEY_B)
    store.save_profile(profile_a())
    store.save_profile(profile_b())
    return make_realistic_home(temp_home)


def switch(name: str, targets: str = ALL, **kwargs: object) -> list[Path]:
    return apply_switch(plan_switch(store.get_profile(name), targets, **kwargs))


def unowned_lines(text: str) -> list[str]:
    """The file's lines minus owned keys and our provider table; trailing commas ignored."""
    out, skipping = [], False
    for line in text.splitlines():
        if line.startswith("[model_providers.gw-"):
            skipping = True
            continue
        if skipping and (line.startswith("[") or not line.strip()):
            skipping = False
        if skipping or OWNED_LINE.search(line):
            continue
        if line.strip() in ('"security": {', '"auth": {'):
            continue
        out.append(line.rstrip().rstrip(","))
    return [line for line in out if line.strip() not in ("", "}", "},")]


def test_switch_changes_only_owned_keys(home: dict[str, Path]) -> None:
    before = snapshot(home)
    written = switch("gw-a")
    assert len(written) == 4
    after = snapshot(home)
    for name in ("claude-code", "codex", "gemini_env", "gemini_settings"):
        old, new = before[name][0].decode(), after[name][0].decode()
        assert old != new
        assert unowned_lines(old) == unowned_lines(new), name
    settings = json.loads(home["claude-code"].read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "https://gw-a.example/api"
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY_A
    assert "ANTHROPIC_API_KEY" not in settings["env"]
    assert settings["env"]["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == "small-a"
    assert settings["hooks"] and settings["statusLine"] and settings["mcpServers"]
    codex = tomlkit.parse(home["codex"].read_text()).unwrap()
    assert codex["model_provider"] == "gw-a"
    assert codex["model_providers"]["gw-a"] == {
        "name": "gw-a",
        "base_url": "https://gw-a.example/api/v1",
        "env_key": "GW_A_KEY",
        "wire_api": "responses",
    }
    assert "profiles" not in codex and KEY_A not in home["codex"].read_text()
    assert "# Codex config, hand-written." in home["codex"].read_text()
    assert '"/p"' in home["codex"].read_text() and "[model_providers.azure]  # my other" in (
        home["codex"].read_text()
    )
    env = envedit.parse(home["gemini_env"].read_text(), "")
    assert (
        env["GEMINI_API_KEY"] == KEY_A
        and env["GOOGLE_GEMINI_BASE_URL"] == "https://gw-a.example/api"
    )
    assert env["GOOGLE_CLOUD_PROJECT"] == "my-project"
    gemini = jsonedit.parse(home["gemini_settings"].read_text(), "", allow_comments=True)
    assert gemini["security"]["auth"]["selectedType"] == "gemini-api-key"


def test_symlink_kept_and_key_files_are_0600(home: dict[str, Path]) -> None:
    switch("gw-a")
    assert home["claude-code"].is_symlink()
    assert os.readlink(home["claude-code"]) == str(home["claude_real"])
    assert stat.S_IMODE(home["claude_real"].stat().st_mode) == 0o600
    assert stat.S_IMODE(home["gemini_env"].stat().st_mode) == 0o600
    assert stat.S_IMODE(home["codex"].stat().st_mode) == 0o644  # no key in it
    for backup in list_backups():
        for entry in backup.files:
            stored = backup.folder / entry.stored
            assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(ownership.state_path().stat().st_mode) == 0o600


def test_second_identical_switch_changes_no_byte_and_makes_no_backup(home: dict[str, Path]) -> None:
    switch("gw-a")
    after_first = snapshot(home)
    backups = len(list_backups())
    plan = plan_switch(store.get_profile("gw-a"), ALL)
    assert not plan.changed and plan.diff == ""
    assert switch("gw-a") == []
    assert snapshot(home) == after_first
    assert len(list_backups()) == backups


def test_backups_hold_the_old_files_and_restore_puts_them_back(home: dict[str, Path]) -> None:
    before = snapshot(home)
    switch("gw-a")
    [backup] = list_backups()
    assert backup.profile == "gw-a"
    stored = {Path(e.path): backup.text_of(e) for e in backup.files}
    assert stored[home["claude-code"]].encode() == before["claude-code"][0]
    assert stored[home["codex"]].encode() == before["codex"][0]
    restore(None, backup.id)
    now = snapshot(home)
    for name in home:
        assert now[name][0] == before[name][0], name
    assert home["claude-code"].is_symlink()
    # the restore made its own backup, so it can be undone too
    assert len(list_backups()) == 2
    # ownership went back with the bytes: switching again gives the same result as the first time
    switch("gw-a")
    assert json.loads(home["claude-code"].read_text())["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY_A


def test_switch_a_to_b_removes_keys_only_a_set(home: dict[str, Path]) -> None:
    switch("gw-a")
    switch("gw-b")
    env = json.loads(home["claude-code"].read_text())["env"]
    assert env["ANTHROPIC_BASE_URL"] == "https://gw-b.example/anthropic"
    assert env["ANTHROPIC_API_KEY"] == KEY_B
    assert "ANTHROPIC_AUTH_TOKEN" not in env  # never both headers
    assert "ANTHROPIC_DEFAULT_HAIKU_MODEL" not in env  # only A set it
    assert env["ANTHROPIC_MODEL"] == "claude-old-model"  # the user's own value, given back
    assert env["DISABLE_TELEMETRY"] == "1"
    codex = tomlkit.parse(home["codex"].read_text()).unwrap()
    assert "gw-a" not in codex["model_providers"] and "azure" in codex["model_providers"]
    assert codex["model"] == "gpt-5.1-codex"  # user's model back
    assert "# the model I like" in home["codex"].read_text()
    genv = envedit.parse(home["gemini_env"].read_text(), "")
    assert "GEMINI_MODEL" not in genv and genv["GEMINI_API_KEY"] == KEY_B
    assert KEY_A not in home["gemini_env"].read_text()  # no key leaks from A into B


def test_round_trip_a_b_a_gives_the_same_settings(home: dict[str, Path]) -> None:
    """Same keys and values, every unowned byte identical (owned keys may be reordered)."""
    switch("gw-a")
    first = {k: v[0].decode() for k, v in snapshot(home).items()}
    switch("gw-b")
    switch("gw-a")
    second = {k: v[0].decode() for k, v in snapshot(home).items()}
    for name in first:
        assert unowned_lines(first[name]) == unowned_lines(second[name]), name
    assert json.loads(first["claude-code"]) == json.loads(second["claude-code"])
    assert tomlkit.parse(first["codex"]) == tomlkit.parse(second["codex"])
    assert envedit.parse(first["gemini_env"], "") == envedit.parse(second["gemini_env"], "")


@pytest.mark.parametrize(
    ("name", "garbage"),
    [
        ("claude_real", '{\n  "hooks": {},\n  "env": {"A": 1,}\n}\n'),
        ("codex", '[model_providers.x]\nname = "x"\nbase_url = \n'),
        ("gemini_settings", '{"ui": {"theme": "x"}\n'),
    ],
)
def test_malformed_file_is_refused_and_nothing_written(
    home: dict[str, Path], name: str, garbage: str
) -> None:
    home[name].write_text(garbage)
    before = snapshot(home)
    state_before = ownership.state_path().exists()
    with pytest.raises(UserError) as err:
        switch("gw-a")
    message = err.value.one_line()
    assert home[name].name in message and "line" in message
    assert snapshot(home) == before  # bytes and mtimes of every target file
    assert list_backups() == []
    assert ownership.state_path().exists() == state_before


def test_failure_in_a_later_file_rolls_back_the_earlier_ones(home: dict[str, Path]) -> None:
    # ~/.gemini is a file instead of a folder: the gemini writes fail after claude and codex
    for path in (home["gemini_env"], home["gemini_settings"]):
        path.unlink()
    home["gemini_env"].parent.rmdir()
    home["gemini_env"].parent.write_text("not a folder")
    before = snapshot(home)
    with pytest.raises(UserError, match="rolled back 2 file"):
        switch("gw-a")
    after = snapshot(home)
    for name in ("claude-code", "claude_real", "codex"):
        assert after[name][0] == before[name][0], name
    assert home["claude-code"].is_symlink()
    assert ownership.load_state().files == {}  # nothing recorded as owned


def test_hand_edit_of_an_owned_key_is_a_conflict(home: dict[str, Path]) -> None:
    switch("gw-a")
    text = home["claude-code"].read_text()
    text = text.replace("https://gw-a.example/api", "https://hand.example")
    text = text.replace('"DISABLE_TELEMETRY": "1"', '"DISABLE_TELEMETRY": "0"')  # unowned edit
    home["claude_real"].write_text(text)
    plan = plan_switch(store.get_profile("gw-b"), "claude-code")
    assert plan.conflicts and "ANTHROPIC_BASE_URL" in plan.conflicts[0]
    before = snapshot(home)
    with pytest.raises(UserError, match="changed by hand"):
        apply_switch(plan)
    assert snapshot(home) == before
    # keep: the hand-edited key stays and is no longer ours
    apply_switch(plan_switch(store.get_profile("gw-b"), "claude-code", on_conflict="keep"))
    env = json.loads(home["claude-code"].read_text())["env"]
    assert env["ANTHROPIC_BASE_URL"] == "https://hand.example"
    assert env["DISABLE_TELEMETRY"] == "0" and env["ANTHROPIC_API_KEY"] == KEY_B
    # overwrite: ours wins
    home["claude_real"].write_text(home["claude-code"].read_text().replace(KEY_B, "hand-key-1234"))
    apply_switch(plan_switch(store.get_profile("gw-a"), "claude-code", on_conflict="overwrite"))
    env = json.loads(home["claude-code"].read_text())["env"]
    assert env["ANTHROPIC_AUTH_TOKEN"] == KEY_A and "ANTHROPIC_API_KEY" not in env


def test_unowned_external_edit_is_kept_without_conflict(home: dict[str, Path]) -> None:
    switch("gw-a")
    with home["codex"].open("a") as handle:
        handle.write('\n[mcp_servers.new]  # added later by hand\ncommand = "x"\n')
    plan = plan_switch(store.get_profile("gw-b"), "codex")
    assert plan.conflicts == []
    apply_switch(plan)
    assert "[mcp_servers.new]  # added later by hand" in home["codex"].read_text()


def test_project_scope_keeps_the_key_out_of_the_committed_file(
    home: dict[str, Path], temp_home: Path
) -> None:
    switch("gw-a", "claude-code", scope="project")
    project = Path.cwd() / ".claude" / "settings.json"
    local = Path.cwd() / ".claude" / "settings.local.json"
    assert KEY_A not in project.read_text()
    assert (
        json.loads(project.read_text())["env"]["ANTHROPIC_BASE_URL"] == "https://gw-a.example/api"
    )
    assert json.loads(local.read_text())["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY_A
    assert stat.S_IMODE(local.stat().st_mode) == 0o600
    assert ownership.load_state().active["claude-code:project"] == "gw-a"


def test_codex_never_redefines_a_builtin_or_a_users_provider(home: dict[str, Path]) -> None:
    from eloledger.profiles.model import Profile

    store.save_profile(Profile(name="openai", base_url="https://proxy.example", key_env="GW_A_KEY"))
    store.save_profile(Profile(name="azure", base_url="https://proxy2.example", key_env="GW_A_KEY"))
    switch("openai", "codex")
    assert tomlkit.parse(home["codex"].read_text())["model_provider"] == "eloledger-openai"
    switch("azure", "codex")
    codex = tomlkit.parse(home["codex"].read_text()).unwrap()
    assert codex["model_provider"] == "eloledger-azure"
    assert (
        codex["model_providers"]["azure"]["base_url"] == "https://example.openai.azure.com/openai"
    )
    assert "eloledger-openai" not in codex["model_providers"]


def test_missing_key_is_a_clear_error_before_anything_is_written(
    home: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GW_A_KEY")
    before = snapshot(home)
    with pytest.raises(UserError, match=r"\$GW_A_KEY is not set"):
        switch("gw-a")
    assert snapshot(home) == before


def test_profile_that_does_not_serve_a_client_is_refused(home: dict[str, Path]) -> None:
    with pytest.raises(UserError, match="does not serve codex"):
        plan_switch(store.get_profile("deepseek"), "codex")


def test_fresh_home_gets_minimal_files(temp_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_A_KEY", KEY_A)
    store.save_profile(profile_a())
    switch("gw-a")
    assert (
        json.loads((temp_home / ".claude" / "settings.json").read_text())["env"][
            "ANTHROPIC_AUTH_TOKEN"
        ]
        == KEY_A
    )
    assert (
        tomlkit.parse((temp_home / ".codex" / "config.toml").read_text())["model_provider"]
        == "gw-a"
    )
    # nothing to back up but "did not exist": restore deletes them again
    [backup] = list_backups()
    assert not any(e.existed for e in backup.files)
    restore(None, backup.id)
    assert not (temp_home / ".claude" / "settings.json").exists()


def test_only_the_last_n_backup_sets_are_kept(home: dict[str, Path]) -> None:
    from eloledger.profiles.backups import create_backup

    for i in range(5):
        create_backup([(home["codex"], home["codex"], f"v{i}", None)], reason="test", keep=3)
    kept = list_backups()
    assert len(kept) == 3
    assert [b.text_of(b.files[0]) for b in kept] == ["v2", "v3", "v4"]


def test_codex_profile_file_leaves_config_toml_alone(home: dict[str, Path]) -> None:
    before = home["codex"].read_bytes()
    apply_switch(plan_switch(store.get_profile("gw-a"), "codex", codex_profile_file=True))
    assert home["codex"].read_bytes() == before
    side = home["codex"].parent / "gw-a.config.toml"
    data = tomlkit.parse(side.read_text()).unwrap()
    assert data["model_provider"] == "gw-a"
    assert data["model_providers"]["gw-a"]["base_url"] == "https://gw-a.example/api/v1"
    assert "codex" not in ownership.load_state().active


def test_diff_masks_a_hand_set_key_that_the_switch_removes(home: dict[str, Path]) -> None:
    hand_key = "handmade-token-not-key-shaped-42"
    text = (
        home["claude_real"]
        .read_text()
        .replace(
            '"DISABLE_TELEMETRY": "1"',
            f'"DISABLE_TELEMETRY": "1", "ANTHROPIC_API_KEY": "{hand_key}"',
        )
    )
    home["claude_real"].write_text(text)
    plan = plan_switch(store.get_profile("gw-a"), "claude-code")  # bearer: the API key must go
    assert '-    "DISABLE_TELEMETRY": "1", "ANTHROPIC_API_KEY"' in plan.diff
    assert hand_key not in plan.diff and KEY_A not in plan.diff


def test_diff_masks_the_users_own_secrets_in_context_lines(home: dict[str, Path]) -> None:
    """Unowned neighbours show up as context: a token there is masked, other values are not."""
    github = "ghp_handmade0123456789abcdef"
    dotenv = "plain-password-hunter2"
    text = home["claude_real"].read_text()
    text = text.replace(
        '"DISABLE_TELEMETRY": "1"', f'"DISABLE_TELEMETRY": "1", "GITHUB_TOKEN": "{github}"'
    )
    home["claude_real"].write_text(text)
    home["gemini_env"].write_text(home["gemini_env"].read_text() + f"DB_PASSWORD={dotenv}\n")
    plan = plan_switch(store.get_profile("gw-a"), "claude-code,gemini-cli")
    assert '"GITHUB_TOKEN": "ghp_ha…(28 chars)"' in plan.diff
    assert "DB_PASSWORD=plain-…(22 chars)" in plan.diff
    assert github not in plan.diff and dotenv not in plan.diff
    assert '"DISABLE_TELEMETRY": "1"' in plan.diff  # only secret-named values are hidden
