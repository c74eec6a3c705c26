"""The switch diff needs URLs and settings, not the key: it is shown with the key absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.errors import UserError
from eloledger.profiles.store import get_profile
from eloledger.profiles.switch import apply_switch, plan_switch

KEY = "gw-preview-key-0123456789abcdef"


@pytest.fixture
def gw(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["profile", "add", "gw", "--base-url", "http://127.0.0.1:18201", "--key-env", "GW_KEY"]
    assert main(argv) == 0
    capsys.readouterr()


def test_diff_without_the_key_shows_where_it_would_come_from(
    capsys: pytest.CaptureFixture[str], temp_home: Path, gw: None
) -> None:
    status = main(["profile", "diff", "gw", "--to", "claude-code,codex,gemini-cli"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert '"ANTHROPIC_BASE_URL": "http://127.0.0.1:18201"' in out
    assert '"ANTHROPIC_AUTH_TOKEN": "<key from $GW_KEY: not set>"' in out
    assert "GEMINI_API_KEY=<key from $GW_KEY: not set>" in out or "GEMINI_API_KEY" in out
    assert 'env_key = "GW_KEY"' in out
    assert not (temp_home / ".claude").exists()  # a diff writes nothing


def test_a_preview_plan_cannot_be_applied_and_use_still_refuses(
    capsys: pytest.CaptureFixture[str], temp_home: Path, gw: None
) -> None:
    plan = plan_switch(get_profile("gw"), "claude-code", preview=True)
    assert plan.key_missing and plan.changed
    with pytest.raises(UserError, match=r"\$GW_KEY is not set"):
        apply_switch(plan)
    assert not (temp_home / ".claude").exists()
    status = main(["profile", "use", "gw", "--to", "claude-code", "--yes"])
    _out, err = capsys.readouterr()
    assert status == 2 and "$GW_KEY is not set" in err


def test_diff_with_the_key_masks_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, gw: None
) -> None:
    monkeypatch.setenv("GW_KEY", KEY)
    assert main(["profile", "diff", "gw", "--to", "claude-code,gemini-cli"]) == 0
    out = capsys.readouterr().out
    assert KEY not in out and "gw-pre…(31 chars)" in out
