"""Hostile input to `eloledger profile …`, `env` and the files they read.

Every case must end in one line on stderr naming the field or file and the fix, exit status 2,
no traceback, and every file exactly as it was (bytes and mtime).
"""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from test_profiles_helpers import snapshot

from eloledger.cli import main
from eloledger.profiles import store

PASSWORD = "hunter2-pass-9876"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_refused(status: int, out: str, err: str, *names: str) -> None:
    assert status == 2, (status, out, err)
    assert err.startswith("eloledger: error:") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for name in names:
        assert name in err, (name, err)


def watched(home: Path) -> dict[str, Path]:
    return {
        "profiles": store.profiles_path(),
        "secrets": store.secrets_path(),
        "claude-code": home / ".claude" / "settings.json",
        "codex": home / ".codex" / "config.toml",
    }


@pytest.fixture
def stored(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(
        capsys, "profile", "add", "gw", "--base-url", "https://gw.example/api", "--key-env", "GW"
    )
    assert status == 0, err


BAD_URLS = [
    ("http://[::1", "not a valid URL"),
    ("https://gw.example/api\nX-Evil: 1", "whitespace"),
    ("https://gw.example:70000/api", "port"),
    ("https://gw.example:0/api", "port"),
    (" https://gw.example/api", "spaces around"),
    ("https://gw.example/api ", "spaces around"),
    ("https://gw.exa mple/api", "whitespace"),
    ("https://gw.example/api\x00", "control"),
    ("ftp://gw.example", "http(s)"),
    ("https://gw.example/api?x=1", "query"),
]


@pytest.mark.parametrize(("url", "says"), BAD_URLS)
def test_add_refuses_a_bad_base_url(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None, url: str, says: str
) -> None:
    before = snapshot(watched(temp_home))
    status, out, err = run(capsys, "profile", "add", "x", "--base-url", url, "--key-env", "K")
    assert_refused(status, out, err, "base_url", says)
    assert snapshot(watched(temp_home)) == before


@pytest.mark.parametrize(("url", "says"), BAD_URLS[:4])
def test_edit_refuses_a_bad_client_url(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None, url: str, says: str
) -> None:
    before = snapshot(watched(temp_home))
    status, out, err = run(capsys, "profile", "edit", "gw", "--codex-url", url)
    assert_refused(status, out, err, "codex.base_url", says)
    assert snapshot(watched(temp_home)) == before


@pytest.mark.parametrize("action", ["add", "edit"])
def test_a_password_in_the_url_is_refused_and_never_echoed(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None, action: str
) -> None:
    before = snapshot(watched(temp_home))
    url = f"https://alice:{PASSWORD}@gw.example/api"
    argv = ["profile", action, "gw" if action == "edit" else "x2", "--base-url", url]
    status, out, err = run(capsys, *argv, *(["--key-env", "K"] if action == "add" else []))
    assert_refused(status, out, err, "password", "--key-env")
    assert PASSWORD not in out + err
    assert snapshot(watched(temp_home)) == before


def test_a_stored_profile_with_a_password_is_masked_everywhere(
    capsys: pytest.CaptureFixture[str], temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profiles file written before the refusal (or by hand) still never prints it."""
    path = store.profiles_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        f'[profiles.old]\nbase_url = "https://alice:{PASSWORD}@gw.example/api"\n'
        'key_env = "OLD_KEY"\n'
    )
    monkeypatch.setenv("OLD_KEY", "sk-old-key-0123456789abcdef")
    for argv in (
        ("profile", "list"),
        ("profile", "list", "--format", "json"),
        ("profile", "show", "old"),
        ("profile", "show", "old", "--format", "json"),
    ):
        status, out, err = run(capsys, *argv)
        assert status == 0, (argv, err)
        assert PASSWORD not in out + err, argv
        assert "gw.example" in out, argv
    before = snapshot(watched(temp_home))
    for argv in (("env", "old"), ("profile", "use", "old", "--to", "claude-code", "--yes")):
        status, out, err = run(capsys, *argv)
        assert_refused(status, out, err, "password")
        assert PASSWORD not in out + err, argv
    assert snapshot(watched(temp_home)) == before
    status, out, err = run(capsys, "doctor", "--profile", "old", "--offline")
    assert PASSWORD not in out + err
    from eloledger.tui.profile_detail import profile_summary

    shown = profile_summary(store.get_profile("old"), preset=False)
    assert PASSWORD not in shown and "alice:***@gw.example" in shown


def test_bom_in_profiles_toml_is_named(capsys: pytest.CaptureFixture[str], temp_home: Path) -> None:
    path = store.profiles_path()
    path.parent.mkdir(parents=True)
    path.write_text('\ufeff[profiles.gw]\nbase_url = "https://gw.example"\nkey_env = "K"\n')
    before = snapshot(watched(temp_home))
    for argv in (("profile", "list"), ("profile", "edit", "gw", "--model", "m")):
        status, out, err = run(capsys, *argv)
        assert_refused(status, out, err, str(path), "UTF-8 BOM", "without BOM")
    assert snapshot(watched(temp_home)) == before


def test_bom_in_codex_config_is_named(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None
) -> None:
    config = temp_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('\ufeffmodel = "gpt-5"\n')
    before = snapshot(watched(temp_home))
    status, out, err = run(capsys, "profile", "use", "gw", "--to", "codex", "--yes")
    assert_refused(status, out, err, str(config), "UTF-8 BOM")
    assert snapshot(watched(temp_home)) == before


def test_a_broken_settings_file_stops_the_whole_switch(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None
) -> None:
    (temp_home / ".claude").mkdir()
    (temp_home / ".claude" / "settings.json").write_text('{"env": {"A": 1,,}}')
    before = snapshot(watched(temp_home))
    status, out, err = run(capsys, "profile", "use", "gw", "--to", "claude-code,codex", "--yes")
    assert_refused(status, out, err, "settings.json")
    assert snapshot(watched(temp_home)) == before


_URL_PARTS = st.sampled_from(
    ["http://", "https://", "gw.example", "[::1", "[::1]", ":", "65535", "65536", "99999", "@",
     "user:pw@", "/", "/v1", "?", "#", " ", "\n", "\t", "\x7f", "%", "é", "..", "api"]
)  # fmt: skip


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(_URL_PARTS, min_size=1, max_size=7))
def test_any_base_url_is_stored_clean_or_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], temp_home: Path, parts: list[str]
) -> None:
    url = "".join(parts)
    store.profiles_path().unlink(missing_ok=True)
    status, out, err = run(capsys, "profile", "add", "h", "--base-url", url, "--key-env", "K")
    if status == 2:
        assert_refused(status, out, err, "base_url")
        assert not store.profiles_path().exists()
        return
    assert status == 0, (url, out, err)
    from urllib.parse import urlsplit

    assert url == url.strip() and not any(ch.isspace() or ord(ch) < 32 for ch in url)
    split = urlsplit(url)
    assert split.scheme in ("http", "https") and split.hostname
    assert split.port is None or 0 < split.port <= 65535
    assert split.password is None and split.username is None
    status, out, err = run(capsys, "profile", "show", "h")
    assert status == 0 and not err, err


@pytest.mark.parametrize("name", [".codex/config.toml", ".claude/settings.json", ".gemini/.env"])
def test_doctor_names_a_bom_or_non_utf8_config(
    capsys: pytest.CaptureFixture[str], temp_home: Path, name: str
) -> None:
    import json

    path = temp_home / name
    path.parent.mkdir()
    body = "GEMINI_API_KEY=x\n" if name.endswith(".env") else "{}\n"
    path.write_text("\ufeff" + (body if not name.endswith(".toml") else 'model = "m"\n'))
    status, out, err = run(capsys, "doctor", "--offline", "--format", "json")
    assert "Traceback" not in err
    if name.endswith(".env"):  # the doctor reads a .env past its BOM: no traceback is enough
        return
    found = [f for f in json.loads(out)["findings"] if "BOM" in f["message"]]
    assert found and found[0]["code"] == "config.unreadable", out
    assert "without BOM" in found[0]["fix"] and status == 2
    path.write_bytes(b"\xff\xfe{}")
    status, out, err = run(capsys, "doctor", "--offline", "--format", "json")
    assert "Traceback" not in err and "not UTF-8" in out


def _claude_settings(home: Path) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    return path


@pytest.mark.parametrize("kind", ["fifo", "loop", "folder", "latin-1"])
def test_a_settings_file_that_is_not_a_readable_text_file(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None, kind: str
) -> None:
    import os

    path = _claude_settings(temp_home)
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block forever
    elif kind == "loop":
        os.symlink(path, path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b'{"env": {"X": "caf\xe9"}}')
    others = {k: v for k, v in watched(temp_home).items() if k != "claude-code"}
    before, kind_before = snapshot(others), path.lstat()
    for argv in (
        ("profile", "use", "gw", "--to", "claude-code", "--yes"),
        ("profile", "diff", "gw", "--to", "claude-code"),
    ):
        status, out, err = run(capsys, *argv)
        assert_refused(status, out, err, "settings.json")
    assert snapshot(others) == before
    after = path.lstat()
    assert (after.st_mode, after.st_mtime_ns) == (kind_before.st_mode, kind_before.st_mtime_ns)


@pytest.mark.parametrize(
    ("content", "says"),
    [("{not json", "does not parse"), ("<dir>", "folder"), ("<bom>", "UTF-8 BOM")],
)
def test_a_broken_ownership_record_is_named(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None, content: str, says: str
) -> None:
    from eloledger.profiles.ownership import state_path

    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if content == "<dir>":
        path.mkdir()
    else:
        path.write_text('\ufeff{"files": {}}' if content == "<bom>" else content)
    status, out, err = run(capsys, "profile", "use", "gw", "--to", "claude-code", "--yes")
    assert_refused(status, out, err, "ownership.json", says)
    assert not (temp_home / ".claude").exists()


def test_secrets_file_with_a_bom_is_named(
    capsys: pytest.CaptureFixture[str], temp_home: Path
) -> None:
    assert main(["profile", "add", "s", "--base-url", "https://gw.example", "--key-env", "K"]) == 0
    store.secrets_path().write_text('\ufeff[keys]\ns = "gw-secret-0123456789"\n')
    path = store.profiles_path()
    path.write_text(path.read_text().replace('key_env = "K"', "key_in_secrets = true"))
    capsys.readouterr()
    status, out, err = run(capsys, "env", "s")
    assert_refused(status, out, err, "secrets.toml", "UTF-8 BOM")
    assert "gw-secret" not in out + err


@pytest.mark.parametrize(
    "argv",
    [
        ("profile", "add", "../evil", "--base-url", "https://gw.example", "--key-env", "K"),
        ("profile", "add", "x", "--base-url", "https://gw.example", "--key-env", "1BAD"),
        ("profile", "add", "x", "--base-url", "https://gw.example", "--key-env", "K", "--clients",
         "vscode"),
        ("profile", "edit", "nope", "--model", "m"),
        ("profile", "restore", "20990101", "--yes"),
        ("profile", "restore", "--file", "/etc/passwd", "x", "--yes"),
        ("profile", "use", "gw", "--to", "claude-code", "--scope", "project", "--codex-profile-file"),
        ("env", "nope"),
    ],
)  # fmt: skip
def test_more_user_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str], temp_home: Path, stored: None, argv: tuple[str, ...]
) -> None:
    before = snapshot(watched(temp_home))
    status, out, err = run(capsys, *argv)
    assert_refused(status, out, err)
    assert snapshot(watched(temp_home)) == before
