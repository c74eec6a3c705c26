"""eloledger's own records (ownership state, backup manifests) hold hashes, never key values."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.profiles import ownership, store
from eloledger.profiles.backups import backups_dir

PLANTED = "planted-user-token-0123456789abcdef"
GW_KEY = "gw-profile-key-abcdefghijklmnop"


def _files_holding(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _use(capsys: pytest.CaptureFixture[str], name: str) -> None:
    status = main(["profile", "use", name, "--to", "claude-code", "--yes", "-q"])
    _out, err = capsys.readouterr()
    assert status == 0, err


@pytest.fixture
def profiles(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", GW_KEY)
    for name, auth in (("A", "bearer"), ("C", "x-api-key")):
        argv = ["profile", "add", name, "--base-url", f"http://127.0.0.1:1800{len(name)}"]
        assert main([*argv, "--key-env", "GW_KEY", "--auth", auth]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("layout", ["plain", "symlink"])
def test_a_hand_set_token_taken_over_never_lands_in_state_or_manifests(
    capsys: pytest.CaptureFixture[str], temp_home: Path, profiles: None, layout: str
) -> None:
    settings = temp_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    body = json.dumps({"env": {"ANTHROPIC_AUTH_TOKEN": PLANTED}, "theme": "dark"})
    if layout == "symlink":
        real = temp_home / "dotfiles" / "settings.json"
        real.parent.mkdir()
        real.write_text(body)
        os.symlink(real, settings)
    else:
        settings.write_text(body)
    _use(capsys, "A")
    assert _files_holding(store.state_dir(), PLANTED) == []
    # the user's token is still remembered (in the 0600 secrets file) to be given back
    record = ownership.load_state().files[str(settings.resolve())]
    assert PLANTED in record.prior.values()
    assert oct(store.secrets_path().stat().st_mode & 0o777) == "0o600"
    for name in ("C", "A"):
        _use(capsys, name)
        assert _files_holding(store.state_dir(), PLANTED) == []
    assert _files_holding(store.state_dir(), GW_KEY) == []
    manifests = list(backups_dir().rglob("manifest.json"))
    assert manifests and not any(PLANTED.encode() in m.read_bytes() for m in manifests)
    assert not any(GW_KEY.encode() in m.read_bytes() for m in manifests)


def test_a_dangling_settings_symlink_keeps_keys_out_of_state_and_manifests(
    capsys: pytest.CaptureFixture[str], temp_home: Path, profiles: None
) -> None:
    settings = temp_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    real = temp_home / "dotfiles" / "claude" / "settings.json"
    os.symlink(real, settings)  # dangling: the dotfiles repo is not checked out yet
    for name in ("A", "C", "A"):
        _use(capsys, name)
    assert settings.is_symlink() and GW_KEY in real.read_text()
    assert _files_holding(store.state_dir(), GW_KEY) == []
    manifests = list(backups_dir().rglob("manifest.json"))
    assert manifests and not any(GW_KEY.encode() in m.read_bytes() for m in manifests)
