"""`eval "$(eloledger env P)"` never runs code from a file, and names never carry control bytes.

Variable names are checked where they are read (profiles.toml, `profile
import` of a Codex config, `profile add/edit`), each refusal one line naming file:line; key
variables that eloledger itself sets are refused; model names and other free text that reach
client files refuse control characters. Generated names run through a real bash.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import hypothesis.strategies as st
import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from test_profiles_helpers import snapshot

from eloledger.profiles import store
from eloledger.profiles.edit import envedit
from hostile_support import one_line_error, run

# what `eloledger env` sets to a URL or model (not a key): never a key's source
WRITTEN_VARS = frozenset(
    [
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
        "ANTHROPIC_MODEL",
        "GEMINI_MODEL",
        "ELOLEDGER_PROFILE",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
    ]
)
VAR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KEY = "sk-shell-0123456789abcdef"
CONTROLS = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]]
QUOTING = list("\"'`$\\;&|<>(){}[]*?!#~= \n\t")
FRAGMENTS = ["A", "_", "1", "KEY", "$(touch {c})", "`touch {c}`", ";touch {c};", "${{X}}"]


def names(canary: Path) -> st.SearchStrategy[str]:
    """Every variable-name shape: plain, with quoting characters, control characters and
    command substitutions that would create ``canary`` if they ever ran."""
    pieces = st.sampled_from([f.format(c=canary) for f in FRAGMENTS] + QUOTING + CONTROLS)
    return st.one_of(
        st.from_regex(VAR_RE, fullmatch=True).filter(lambda s: len(s) < 40),
        st.lists(pieces, min_size=1, max_size=6).map("".join),
    )


def write_profiles(table: dict) -> Path:
    path = store.profiles_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomlkit.dumps({"profiles": {"x": table}}))
    return path


def bash_eval(env_output: str, canary: Path) -> str:
    script = env_output + '\nprintf %s "${OPENAI_API_KEY-unset}"'
    result = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=30,
        env={"GW": KEY},
        stdin=subprocess.DEVNULL,
    )
    assert not canary.exists(), (env_output, result.stderr)
    return result.stdout


def check_env(capsys: pytest.CaptureFixture[str], canary: Path, name: str, field: str) -> None:
    status, out, err = run(capsys, "env", "x")
    if status == 0:
        assert VAR_RE.match(name) and name not in WRITTEN_VARS, (name, out)
        bash_eval(out, canary)
    else:
        one_line_error(status, err, f"{store.profiles_path()}:", field)
        assert VAR_RE.match(name) is None or name in WRITTEN_VARS, (name, err)
        assert "\x1b" not in err and "\r" not in err


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_codex_env_key_in_profiles_file_never_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: st.DataObject
) -> None:
    canary = tmp_path / "PWN"
    name = data.draw(names(canary))
    write_profiles({"base_url": "https://gw.example/api", "key_in_secrets": False,
                    "key_env": "GW", "codex": {"env_key": name}})  # fmt: skip
    check_env(capsys, canary, name, "codex.env_key")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_key_env_in_profiles_file_never_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: st.DataObject
) -> None:
    canary = tmp_path / "PWN"
    name = data.draw(names(canary))
    write_profiles({"base_url": "https://gw.example/api", "key_env": name})
    check_env(capsys, canary, name, "key_env")


def test_the_issue_payload_names_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = store.profiles_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        '[profiles.X]\nbase_url = "https://gw.example/api"\nkey_env = "GW"\n\n'
        "[profiles.X.codex]\nenv_key = 'X=1;touch /tmp/PWN;Y=\"${KEY}\"'\n"
    )
    status, out, err = run(capsys, "env", "X")
    one_line_error(status, err, f"{path}:6:", "codex.env_key", "not a variable name")
    assert out == ""


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_profile_import_refuses_a_codex_env_key_that_is_not_a_name(
    capsys: pytest.CaptureFixture[str], temp_home: Path, tmp_path: Path, data: st.DataObject
) -> None:
    canary = tmp_path / "PWN"
    name = data.draw(names(canary).filter(lambda s: not VAR_RE.match(s)))
    codex = temp_home / ".codex"
    codex.mkdir(exist_ok=True)
    doc = tomlkit.parse('model_provider = "corp"\n\n[model_providers.corp]\nname = "corp"\n'
                        'base_url = "https://corp.example/v1"\n')  # fmt: skip
    doc["model_providers"]["corp"]["env_key"] = name
    (codex / "config.toml").write_text(tomlkit.dumps(doc))
    watched = {"profiles": store.profiles_path(), "secrets": store.secrets_path()}
    before = snapshot(watched)
    status, _, err = run(capsys, "profile", "import", "mine", "--replace")
    one_line_error(status, err, f"{codex / 'config.toml'}:6:", "env_key")
    assert snapshot(watched) == before
    assert not canary.exists()


def test_first_switch_refuses_an_imported_payload_before_writing(
    capsys: pytest.CaptureFixture[str], temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = temp_home / ".codex"
    codex.mkdir()
    text = (
        'model_provider = "corp"\n[model_providers.corp]\nbase_url = "https://corp.example/v1"\n'
        'env_key = "A$(touch /tmp/PWN)"\n'
    )
    (codex / "config.toml").write_text(text)
    monkeypatch.setenv("GW", KEY)
    assert (
        run(capsys, "profile", "add", "gw", "--base-url", "https://gw.ex", "--key-env", "GW")[0]
        == 0
    )
    status, _, err = run(capsys, "profile", "use", "gw", "--to", "codex", "--yes")
    one_line_error(status, err, f"{codex / 'config.toml'}:4:", "env_key")
    assert (codex / "config.toml").read_text() == text
    assert "imported" not in store.load_profiles()


@pytest.mark.parametrize("var", sorted(WRITTEN_VARS))
@pytest.mark.parametrize("how", ["add", "edit", "file"])
def test_key_variables_eloledger_writes_are_refused(
    capsys: pytest.CaptureFixture[str], var: str, how: str
) -> None:
    if how == "file":
        write_profiles({"base_url": "https://gw.example/api", "key_env": var})
        status, out, err = run(capsys, "env", "x")
        one_line_error(status, err, f"{store.profiles_path()}:", var, "eloledger itself sets")
        return
    if how == "edit":
        assert (
            run(capsys, "profile", "add", "x", "--base-url", "https://gw.ex", "--key-env", "K")[0]
            == 0
        )
        argv = ["profile", "edit", "x", "--key-env", var]
    else:
        argv = ["profile", "add", "x", "--base-url", "https://gw.ex", "--key-env", var]
    before = store.profiles_path().read_bytes() if store.profiles_path().exists() else None
    status, _, err = run(capsys, *argv)
    one_line_error(status, err, "--key-env", var, "eloledger itself sets")
    after = store.profiles_path().read_bytes() if store.profiles_path().exists() else None
    assert after == before


def test_a_key_variable_of_a_client_is_still_a_fine_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """OPENAI_API_KEY holding the key is legitimate: after eval every key variable holds it."""
    assert run(capsys, "profile", "add", "o", "--base-url", "https://gw.ex", "--key-env",
               "OPENAI_API_KEY")[0] == 0  # fmt: skip
    status, out, _ = run(capsys, "env", "o")
    assert status == 0
    script = out + '\nprintf "%s|%s|%s" "$OPENAI_API_KEY" "$ANTHROPIC_AUTH_TOKEN" "$GEMINI_API_KEY"'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                            env={"OPENAI_API_KEY": KEY}, stdin=subprocess.DEVNULL)  # fmt: skip
    assert result.stdout == f"{KEY}|{KEY}|{KEY}"


# --- item 3: control characters in names that reach client files ---------------------------


@pytest.mark.parametrize("ch", ["\r", "\u2028", "\x85", "\x0b", "\n", "\x1b", "\x9b", "\x00"])
@pytest.mark.parametrize("flag", ["--model", "--gemini-cli-model", "--haiku", "--description"])
def test_add_refuses_control_characters_in_free_text(
    capsys: pytest.CaptureFixture[str], ch: str, flag: str
) -> None:
    status, _, err = run(capsys, "profile", "add", "g", "--base-url", "https://gw.ex",
                         "--key-env", "GW", flag, f"model{ch}X")  # fmt: skip
    one_line_error(status, err, "control character", f"U+{ord(ch):04X}")
    assert "g" not in store.load_profiles()


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(ch=st.sampled_from(CONTROLS), where=st.sampled_from(["model", "gemini-cli", "models"]))
def test_a_stored_model_with_a_control_character_is_refused_at_its_line(
    capsys: pytest.CaptureFixture[str], temp_home: Path, ch: str, where: str
) -> None:
    table: dict = {"base_url": "https://gw.example/api", "key_env": "GW"}
    model = f"m{ch}odel"
    if where == "model":
        table["model"] = model
    elif where == "gemini-cli":
        table["gemini-cli"] = {"model": model}
    else:
        table["models"] = {"haiku": model}
    path = write_profiles(table)
    env = temp_home / ".gemini" / ".env"
    status, _, err = run(capsys, "profile", "use", "x", "--to", "gemini-cli", "--yes")
    one_line_error(status, err, f"{path}:", "control character")
    assert not env.exists()


def test_repeated_identical_switches_change_no_byte_of_a_dotenv_with_odd_separators(
    capsys: pytest.CaptureFixture[str], temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand-written value holding \\r, \\x0b, \\x85 or U+2028 is one line to dotenv: the
    reader must not split it, so a second switch finds nothing to do."""
    gemini = temp_home / ".gemini"
    gemini.mkdir()
    text = 'NOTE="a\rb\x0bc\x85d\u2028e"\nGEMINI_MODEL=old\u2028x\n'
    (gemini / ".env").write_bytes(text.encode())
    assert envedit.parse(text, "x") == {
        "NOTE": "a\rb\x0bc\x85d\u2028e",
        "GEMINI_MODEL": "old\u2028x",
    }
    monkeypatch.setenv("GW", KEY)
    assert run(capsys, "profile", "add", "g", "--base-url", "https://gw.ex", "--key-env", "GW",
               "--model", "m1")[0] == 0  # fmt: skip
    assert run(capsys, "profile", "use", "g", "--to", "gemini-cli", "--yes")[0] == 0
    first = (gemini / ".env").read_bytes()
    assert first.decode().count("GEMINI_MODEL=") == 1
    assert first.startswith('NOTE="a\rb\x0bc\x85d\u2028e"\n'.encode())
    for _ in range(2):
        status, out, _ = run(capsys, "profile", "use", "g", "--to", "gemini-cli", "--yes")
        assert status == 0 and "no change" in out
        assert (gemini / ".env").read_bytes() == first


def test_help_names_env_cmd_is_importable() -> None:
    """The shell test above used a real bash: make sure one is there (else they prove nothing)."""
    assert subprocess.run(["bash", "-c", "true"], timeout=10).returncode == 0
    assert sys.executable
