"""Files and commands from before the client names became claude-code / gemini-cli still work.

eloledger once wrote ``[profiles.NAME.claude]``, ``clients = ["claude", "gemini"]``, ownership
records with ``"target": "claude"`` and ``"claude:user"``, and took ``--to claude,gemini``. Each
is read as the new name, and only the new name is written back. Real files in the temp HOME.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eloledger.cli import build_parser, main
from eloledger.errors import UserError
from eloledger.profiles import ownership, store
from eloledger.profiles.active import active_targets
from eloledger.profiles.backups import backups_dir, list_backups

OLD_PROFILES = """\
# my gateways
[profiles.gw]
base_url = "https://gw.example/api"
key_env = "GW_KEY"
clients = ["claude", "codex", "gemini", "anthropic"]

[profiles.gw.claude]
base_url = "https://gw.example/anthropic"
model = "claude-y"

[profiles.gw.gemini]
model = "gemini-x"
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _write_profiles(text: str) -> Path:
    path = store.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _add_a_and_b(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two profiles, A and B, on two gateways, with their key in the environment."""
    monkeypatch.setenv("GW_KEY", "gw-key-0123456789abcdef")
    for name, url in (("A", "https://a.example/api"), ("B", "https://b.example/api")):
        argv = ["profile", "add", name, "--base-url", url, "--key-env", "GW_KEY"]
        assert run(capsys, *argv)[0] == 0


def _to_old_names(path: Path) -> None:
    """Rewrite one of eloledger's JSON records as an earlier eloledger wrote it."""
    text = path.read_text()
    for new, old in (("claude-code", "claude"), ("gemini-cli", "gemini")):
        text = text.replace(f'"target": "{new}"', f'"target": "{old}"')
        text = text.replace(f'"{new}:', f'"{old}:').replace(f'"{new}"', f'"{old}"')
    path.write_text(text)


def test_an_old_profiles_file_is_read_and_saved_in_the_new_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write_profiles(OLD_PROFILES)
    profile = store.get_profile("gw")
    assert profile.clients == ["claude-code", "codex", "gemini-cli", "anthropic"]
    assert set(profile.overrides) == {"claude-code", "gemini-cli"}
    assert profile.client_base_url("claude-code") == "https://gw.example/anthropic"
    assert profile.client_model("claude-code") == "claude-y"  # a model name: left as it is
    assert profile.client_model("gemini-cli") == "gemini-x"

    status, _, err = run(capsys, "profile", "edit", "gw", "--description", "renamed")
    assert status == 0, err
    text = path.read_text()
    assert text.startswith("# my gateways\n")  # the user's comment survives the save
    assert "[profiles.gw.claude-code]" in text and "[profiles.gw.gemini-cli]" in text
    assert "[profiles.gw.claude]" not in text and "[profiles.gw.gemini]" not in text
    assert 'clients = ["claude-code", "codex", "gemini-cli", "anthropic"]' in text
    edited = store.get_profile("gw")
    assert (edited.clients, edited.overrides) == (profile.clients, profile.overrides)


def test_an_old_client_section_keeps_its_line_in_errors() -> None:
    path = _write_profiles(OLD_PROFILES.replace('model = "gemini-x"', 'model = "gemini\\u0007x"'))
    with pytest.raises(UserError) as caught:
        store.load_profiles()
    line = OLD_PROFILES.splitlines().index('model = "gemini-x"') + 1
    assert f"{path}:{line}:" in caught.value.message, caught.value.message


def test_the_old_and_new_name_of_one_client_are_refused_together() -> None:
    _write_profiles(OLD_PROFILES + '\n[profiles.gw.claude-code]\nmodel = "other"\n')
    with pytest.raises(UserError) as caught:
        store.load_profiles()
    assert "[claude] and [claude-code]" in caught.value.message


def test_old_client_names_on_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", "gw-key-0123456789abcdef")
    argv = ["profile", "add", "gw", "--base-url", "https://gw.example/api", "--key-env", "GW_KEY"]
    old_flags = ["--clients", "claude,gemini", "--claude-url", "https://gw.example/anthropic",
                 "--gemini-model", "gemini-x"]  # fmt: skip
    status, _, err = run(capsys, *argv, *old_flags)
    assert status == 0, err
    text = store.profiles_path().read_text()
    assert 'clients = ["claude-code", "gemini-cli"]' in text
    assert "[profiles.gw.claude-code]" in text and "[profiles.gw.gemini-cli]" in text

    status, _, err = run(capsys, "profile", "use", "gw", "--to", "claude,gemini", "--yes", "-q")
    assert status == 0, err
    settings = json.loads((Path.home() / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "https://gw.example/anthropic"
    assert "GEMINI_MODEL=gemini-x" in (Path.home() / ".gemini" / ".env").read_text()
    assert active_targets() == {"claude-code:user": "gw", "gemini-cli": "gw"}


def test_an_old_ownership_record_still_owns_its_keys(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _add_a_and_b(capsys, monkeypatch)
    to = "claude-code,gemini-cli"
    assert run(capsys, "profile", "use", "A", "--to", to, "--yes", "-q")[0] == 0
    record = ownership.state_path()
    _to_old_names(record)
    old = json.loads(record.read_text())
    assert {r["target"] for r in old["files"].values()} == {"claude", "gemini"}
    assert old["active"] == {"claude:user": "A", "gemini": "A"}

    assert active_targets() == {"claude-code:user": "A", "gemini-cli": "A"}
    status, out, err = run(capsys, "profile", "list", "--format", "json")
    assert status == 0, err
    listed = {p["name"]: p["active"] for p in json.loads(out)["profiles"]}
    assert listed == {"A": "claude-code:user,gemini-cli", "B": ""}

    # switching on: the keys A wrote are still eloledger's (no conflict, nothing left over)
    status, _, err = run(capsys, "profile", "use", "B", "--to", to, "--yes", "-q")
    assert status == 0, err
    settings = json.loads((Path.home() / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "https://b.example/api"
    text = record.read_text()
    assert '"claude"' not in text and '"gemini"' not in text and '"claude:' not in text
    assert json.loads(text)["active"] == {"claude-code:user": "B", "gemini-cli": "B"}


def test_an_old_backup_restores_with_the_new_names(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _add_a_and_b(capsys, monkeypatch)
    assert run(capsys, "profile", "use", "A", "--to", "claude-code", "--yes", "-q")[0] == 0
    assert run(capsys, "profile", "use", "B", "--to", "claude-code", "--yes", "-q")[0] == 0
    backup = list_backups()[-1]  # made before B: it holds A's file and A's record
    manifest = backups_dir() / backup.id / "manifest.json"
    _to_old_names(manifest)
    assert '"target": "claude"' in manifest.read_text()

    status, _, err = run(capsys, "profile", "restore", backup.id, "--yes")
    assert status == 0, err
    state = ownership.load_state()
    assert {r.target for r in state.files.values()} == {"claude-code"}
    assert active_targets() == {"claude-code:user": "A"}
    assert '"claude"' not in ownership.state_path().read_text()


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["import", "gemini"], "kind", "gemini-cli"),
        (["import", "gemini-cli"], "kind", "gemini-cli"),
        (["watch", "--gemini"], "logs", "gemini-cli"),
        (["watch", "--gemini-cli"], "logs", "gemini-cli"),
    ],
)
def test_old_import_and_watch_names_parse_to_the_new_ones(
    argv: list[str], dest: str, value: str
) -> None:
    assert getattr(build_parser().parse_args(argv), dest) == value


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return capsys.readouterr().out


def test_help_shows_only_the_new_names(capsys: pytest.CaptureFixture[str]) -> None:
    old_name = re.compile(r"(?<![\w./~-])(claude|gemini)(?![\w-])")  # not ~/.gemini, claude-y
    for argv in (["import"], ["watch"], ["profile", "use"]):
        out = _help(capsys, *argv)
        assert "gemini-cli" in out and not old_name.search(out), out
    out = _help(capsys, "profile", "add")  # its --wire-api choices name the gemini wire
    assert "--claude-code-url" in out and "--gemini-cli-model" in out
    assert "--claude-url" not in out and "--gemini-model" not in out
