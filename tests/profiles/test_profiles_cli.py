"""`eloledger profile …` and `eloledger env`, as a new user would try them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_profiles_helpers import make_realistic_home, snapshot

from eloledger.cli import main
from eloledger.profiles import store
from eloledger.profiles.backups import backups_dir, list_backups

KEY = "sk-cli-0123456789abcdefXYZ"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def cli(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )


def test_add_show_list_edit_remove(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("GW_KEY", KEY)
    status, out, _ = run(
        capsys, "profile", "add", "gw", "--base-url", "https://gw.example/api", "--key-env",
        "GW_KEY", "--haiku", "h-1", "--codex-url", "https://gw.example/codex/v1",
    )  # fmt: skip
    assert status == 0 and "saved profile 'gw'" in out
    status, out, _ = run(capsys, "profile", "show", "gw", "--format", "json")
    info = json.loads(out)
    assert info["clients"]["claude-code"]["base_url"] == "https://gw.example/api"
    assert info["clients"]["openai"]["base_url"] == "https://gw.example/api/v1"
    assert info["clients"]["codex"]["base_url"] == "https://gw.example/codex/v1"
    assert info["key"]["value"].startswith("sk-cli") and KEY not in out  # masked
    status, out, _ = run(capsys, "profile", "show", "gw")
    assert KEY not in out and "$GW_KEY" in out
    status, out, _ = run(capsys, "profile", "edit", "gw", "--model", "m-2", "--auth", "x-api-key")
    assert store.get_profile("gw").model == "m-2" and store.get_profile("gw").auth == "x-api-key"
    status, out, _ = run(capsys, "profile", "list", "--presets")
    assert "gw" in out and "openrouter" in out and "preset" in out
    assert run(capsys, "profile", "remove", "gw")[0] == 0
    assert "gw" not in store.load_profiles()


def test_key_stdin_goes_to_0600_secrets_file_never_the_profiles_file() -> None:
    result = cli("profile", "add", "sec", "--preset", "openrouter", "--key-stdin", stdin=KEY + "\n")
    assert result.returncode == 0, result.stderr
    assert KEY not in store.profiles_path().read_text()
    assert KEY in store.secrets_path().read_text()
    assert stat.S_IMODE(store.secrets_path().stat().st_mode) == 0o600
    show = cli("profile", "show", "sec")
    assert KEY not in show.stdout and "secrets file" in show.stdout


def test_user_mistakes_are_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        ("profile", "show", "nope"),
        ("profile", "add", "x", "--base-url", "https://x.example/api?utm=1", "--key-env", "K"),
        ("profile", "add", "x", "--base-url", "https://x.example"),  # no key
        ("profile", "use", "openrouter", "--to", "vscode", "--yes"),
        ("profile", "use", "deepseek", "--to", "codex", "--yes"),
        ("env",),
        ("profile", "restore", "nope", "--yes"),
    ]
    for argv in cases:
        status, out, err = run(capsys, *argv)
        assert status == 2, argv
        assert err.startswith("eloledger: error:") and err.count("\n") == 1, (argv, err)
        assert "Traceback" not in err


def test_use_refuses_without_tty_unless_yes(temp_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    paths = make_realistic_home(temp_home)
    before = snapshot(paths)
    result = cli("profile", "use", "openrouter", "--to", "claude-code,codex")
    assert result.returncode == 2 and "stdin is not a terminal" in result.stderr
    assert snapshot(paths) == before
    diff = cli("profile", "diff", "openrouter", "--to", "claude-code,codex")
    assert diff.returncode == 0
    assert '+    "ANTHROPIC_BASE_URL": "https://openrouter.ai/api"' in diff.stdout
    assert KEY not in diff.stdout and "sk-cli" in diff.stdout  # masked in the diff
    assert snapshot(paths) == before  # diff writes nothing
    result = cli("profile", "use", "openrouter", "--to", "claude-code,codex,shell", "--yes")
    assert result.returncode == 0, result.stderr
    assert "wrote 2 files" in result.stdout and "restore" in result.stdout
    assert KEY not in result.stdout + result.stderr
    settings = json.loads(paths["claude-code"].read_text())
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY
    again = cli("profile", "use", "openrouter", "--to", "claude-code,codex,shell", "--yes")
    assert again.returncode == 0 and "no change" in again.stdout
    assert len(list_backups()) == 1
    listing = cli("profile", "restore", "--list")
    assert list_backups()[0].id in listing.stdout
    restored = cli("profile", "restore", list_backups()[0].id, "--yes")
    assert restored.returncode == 0, restored.stderr
    assert snapshot(paths)["claude-code"][0] == before["claude-code"][0]


def test_first_use_imports_the_live_config(temp_home: Path, monkeypatch) -> None:
    claude = temp_home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {"Stop": []},
                "env": {
                    "ANTHROPIC_BASE_URL": "https://old-gw.example/api",
                    "ANTHROPIC_AUTH_TOKEN": "sk-old-0123456789abcd",
                    "ANTHROPIC_MODEL": "old-model",
                },
            },
            indent=2,
        )
    )
    original = (claude / "settings.json").read_text()
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    result = cli("profile", "use", "openrouter", "--to", "claude-code", "--yes")
    assert result.returncode == 0, result.stderr
    assert "saved as profile 'imported'" in result.stderr
    env = json.loads((claude / "settings.json").read_text())["env"]
    assert "ANTHROPIC_MODEL" not in env  # the old provider's model does not leak
    imported = store.get_profile("imported")
    assert imported.base_url == "https://old-gw.example/api" and imported.key_in_secrets
    assert "sk-old" not in store.profiles_path().read_text()
    back = cli("profile", "use", "imported", "--to", "claude-code", "--yes")
    assert back.returncode == 0, back.stderr
    assert json.loads((claude / "settings.json").read_text()) == json.loads(original)


def test_env_output_evals_in_bash(monkeypatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    out = cli("env", "openrouter").stdout
    assert KEY not in out  # referenced, not copied
    assert 'export OPENAI_API_KEY="${OPENROUTER_API_KEY}"' in out
    script = (
        f'export ANTHROPIC_API_KEY=stale; eval "$({sys.executable} -m eloledger env openrouter)"; '
        'echo "$OPENAI_BASE_URL|$OPENAI_API_KEY|$ANTHROPIC_BASE_URL|$ANTHROPIC_AUTH_TOKEN|'
        '${ANTHROPIC_API_KEY-unset}|${GOOGLE_GEMINI_BASE_URL-unset}"'
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == (
        f"https://openrouter.ai/api/v1|{KEY}|https://openrouter.ai/api|{KEY}|unset|unset"
    )


def test_env_exports_a_stored_key_quoted() -> None:
    weird = "sk-with'quote $and space-0123456789"
    assert (
        cli(
            "profile", "add", "s", "--base-url", "https://s.example", "--key-stdin", stdin=weird
        ).returncode
        == 0
    )
    script = f'eval "$({sys.executable} -m eloledger env s)"; printf %s "$OPENAI_API_KEY"'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout == weird


def test_help_has_examples() -> None:
    result = cli("profile", "use", "--help")
    assert result.returncode == 0 and "examples:" in result.stdout
    assert "examples:" in cli("env", "--help").stdout


def test_import_adopts_codex_provider_and_gemini_env(temp_home: Path) -> None:
    (temp_home / ".codex").mkdir()
    (temp_home / ".codex" / "config.toml").write_text(
        '# mine\nmodel_provider = "gw"\nmodel = "m-1"\n\n[model_providers.gw]\nname = "GW"\n'
        'base_url = "https://gw.example/api/v1"\nenv_key = "GW_KEY"\nwire_api = "responses"\n'
    )
    (temp_home / ".gemini").mkdir()
    (temp_home / ".gemini" / ".env").write_text(
        "# keep\nGOOGLE_GEMINI_BASE_URL=https://gw.example/api\nGEMINI_API_KEY=AIza-import-key-0123456789\n"
    )
    result = cli("profile", "import", "mine")
    assert result.returncode == 0, result.stderr
    profile = store.get_profile("mine")
    assert profile.base_url == "https://gw.example/api" and profile.model == "m-1"
    assert profile.client_base_url("codex") == "https://gw.example/api/v1"
    assert profile.key_in_secrets and "AIza-import" not in store.profiles_path().read_text()
    assert profile.overrides["codex"].extra["env_key"] == "GW_KEY"  # Codex keeps reading GW_KEY
    again = cli("profile", "import", "mine")
    assert again.returncode == 2 and "exists" in again.stderr


def test_use_without_yes_shows_diff_and_asks_on_a_terminal(temp_home: Path, monkeypatch) -> None:
    import pty

    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    paths = make_realistic_home(temp_home)
    before = snapshot(paths)
    for answer, changed in ((b"n\n", False), (b"y\n", True)):
        leader, follower = pty.openpty()
        os.write(leader, answer)
        result = subprocess.run(
            [sys.executable, "-m", "eloledger", "profile", "use", "openrouter", "--to", "claude-code"],
            stdin=follower, capture_output=True, text=True, timeout=60, env=dict(os.environ),
        )  # fmt: skip
        os.close(leader)
        os.close(follower)
        assert "Write 1 file? [y/N]" in result.stderr
        assert '+    "ANTHROPIC_BASE_URL": "https://openrouter.ai/api"' in result.stdout
        assert (snapshot(paths)["claude-code"][0] != before["claude-code"][0]) is changed
        assert result.returncode == (0 if changed else 1)


def test_edit_key_stdin_moves_the_key_into_the_secrets_file(monkeypatch) -> None:
    assert (
        cli(
            "profile", "add", "k", "--base-url", "https://k.example", "--key-env", "K_VAR"
        ).returncode
        == 0
    )
    assert cli("profile", "edit", "k", "--key-stdin", stdin=KEY).returncode == 0
    profile = store.get_profile("k")
    assert profile.key_in_secrets and store.resolve_key(profile) == KEY


def test_diff_always_ends_lines_and_new_json_files_end_with_a_newline(
    temp_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    """A file without a final newline must not glue the next diff header to its last line."""
    monkeypatch.setenv("GW_KEY", KEY)
    run(capsys, "profile", "add", "gw", "--base-url", "https://gw.example/api", "--key-env",
        "GW_KEY")  # fmt: skip
    (temp_home / ".claude").mkdir()
    (temp_home / ".claude/settings.json").write_text('{"model": "x"}')  # no final newline
    status, out, _ = run(capsys, "profile", "diff", "gw", "--to", "claude-code,gemini-cli")
    assert status == 0 and out.endswith("\n")
    headers = [line for line in out.splitlines() if line.startswith(("---", "+++"))]
    assert [h.split()[1].removeprefix(str(temp_home)) for h in headers] == [
        "/.claude/settings.json",
        "/.claude/settings.json",
        "/dev/null",
        "/.gemini/.env",
        "/dev/null",
        "/.gemini/settings.json",
    ]
    status, _, _ = run(capsys, "profile", "use", "gw", "--to", "gemini-cli", "--yes")
    assert status == 0
    assert (temp_home / ".gemini/settings.json").read_text().endswith("}\n")
    manifests = list(backups_dir().glob("*/manifest.json"))
    assert manifests and all(m.read_text().endswith("}\n") for m in manifests)
