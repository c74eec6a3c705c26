"""Which profile is active comes from what the client files hold, not from a stale memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.profiles.active import active_profile
from eloledger.profiles.backups import list_backups


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def active_in_list(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    status, out, err = run(capsys, "profile", "list", "--format", "json")
    assert status == 0, err
    return {p["name"]: p["active"] for p in json.loads(out)["profiles"]}


@pytest.fixture
def two(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", "gw-key-0123456789abcdef")
    for name, port in (("A", 18101), ("B", 18102)):
        argv = ["profile", "add", name, "--base-url", f"http://127.0.0.1:{port}"]
        assert run(capsys, *argv, "--key-env", "GW_KEY")[0] == 0


def test_restoring_a_pre_switch_backup_makes_the_old_profile_active_again(
    capsys: pytest.CaptureFixture[str], two: None
) -> None:
    assert active_profile() is None
    assert run(capsys, "profile", "use", "A", "--to", "claude-code,codex", "--yes", "-q")[0] == 0
    assert active_profile() == "A"
    assert run(capsys, "profile", "use", "B", "--to", "claude-code,codex", "--yes", "-q")[0] == 0
    assert active_in_list(capsys) == {"A": "", "B": "claude-code:user,codex"}
    before_b = list_backups()[-1].id  # made by the switch to B: the files as A left them
    status, _out, err = run(capsys, "profile", "restore", before_b, "--yes")
    assert status == 0, err
    assert active_in_list(capsys) == {"A": "claude-code:user,codex", "B": ""}
    assert active_profile() == "A"
    status, out, _err = run(capsys, "profile", "list")
    line_a = next(line for line in out.splitlines() if line.split()[:2] == ["*", "A"])
    assert "claude-code:user" in line_a and "* active" in out
    assert next(line for line in out.splitlines() if " B " in line).startswith(" ")


def test_a_hand_edit_of_the_url_means_the_profile_is_no_longer_active_there(
    capsys: pytest.CaptureFixture[str], temp_home: Path, two: None
) -> None:
    assert run(capsys, "profile", "use", "A", "--to", "claude-code,codex", "--yes", "-q")[0] == 0
    settings = temp_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["env"]["ANTHROPIC_BASE_URL"] = "https://elsewhere.example"
    settings.write_text(json.dumps(data))
    assert active_in_list(capsys) == {"A": "codex", "B": ""}
    data = json.loads(settings.read_text())  # an unrelated edit does not matter
    data["env"]["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:18101"
    data["theme"] = "light"
    settings.write_text(json.dumps(data))
    assert active_in_list(capsys) == {"A": "claude-code:user,codex", "B": ""}


def test_restore_keeps_the_remembered_active_in_step(
    capsys: pytest.CaptureFixture[str], two: None
) -> None:
    from eloledger.profiles.ownership import load_state

    assert run(capsys, "profile", "use", "A", "--to", "claude-code", "--yes", "-q")[0] == 0
    assert run(capsys, "profile", "use", "B", "--to", "claude-code", "--yes", "-q")[0] == 0
    assert run(capsys, "profile", "restore", list_backups()[-1].id, "--yes")[0] == 0
    assert load_state().active == {"claude-code:user": "A"}


def test_restore_list_is_newest_first_and_fits_80_columns(
    capsys: pytest.CaptureFixture[str], two: None, temp_home: Path
) -> None:
    for name in ("A", "B", "A"):
        argv = ("profile", "use", name, "--to", "claude-code,codex", "--yes", "-q")
        assert run(capsys, *argv)[0] == 0
    status, out, _err = run(capsys, "profile", "restore", "--list")
    assert status == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, out
    ids = [b.id for b in list_backups()]
    assert lines[0].split()[:3] == ["when", "id", "files"]
    rows = lines[2:5]
    assert [line.split()[2] for line in rows] == ids[::-1]
    assert "switch to A" in rows[0] and "switch to B" in rows[1]
    status, wide, _err = run(capsys, "profile", "restore", "--list", "--wide")
    assert "settings.json" in wide and "config.toml" in wide
    status, js, _err = run(capsys, "profile", "restore", "--list", "--format", "json")
    backups = json.loads(js)["backups"]
    assert [b["id"] for b in backups] == ids[::-1] and backups[0]["files"] == 2
