"""A switch's words are grammatical, counts singular for one."""

from __future__ import annotations

import pytest

from eloledger.cli import main
from eloledger.words import plural


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_switch_says_one_file_and_is_already_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_KEY", "gw-key-0123456789abcdef")
    _run(
        capsys,
        "profile",
        "add",
        "gw",
        "--base-url",
        "http://127.0.0.1:18111",
        "--key-env",
        "GW_KEY",
    )
    out = _run(capsys, "profile", "use", "gw", "--to", "codex", "--yes")
    assert "switched codex to 'gw': wrote 1 file\n" in out
    out = _run(capsys, "profile", "use", "gw", "--to", "codex", "--yes")
    assert out.strip() == "no change: codex is already on 'gw'"
    out = _run(capsys, "profile", "use", "gw", "--to", "claude-code,codex", "--yes")
    assert "wrote 1 file\n" in out  # codex holds already; only Claude Code's file changes
    out = _run(capsys, "profile", "use", "gw", "--to", "claude-code,codex", "--yes")
    assert out.strip() == "no change: claude-code, codex are already on 'gw'"


def test_plural() -> None:
    assert [plural(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert plural(3, "entry", "entries") == "3 entries"
