"""Every test runs in a temporary HOME with no provider variables, so nothing real is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eloledger import redact

SHARED = Path(__file__).resolve().parents[2] / "shared"

_PROVIDER_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_MODEL",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_RESTRICTED_MODE",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "NO_COLOR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def temp_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME (and cwd) per test; provider and proxy variables removed."""
    home = tmp_path_factory.mktemp("home")
    work = tmp_path_factory.mktemp("work")
    for var in _PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.chdir(work)
    redact.forget_all()
    assert os.path.realpath(os.path.expanduser("~")) == os.path.realpath(home)
    return home


@pytest.fixture
def shared_dir() -> Path:
    """The project's shared/ folder (real data for tests); skips if it is not beside the repo."""
    if not SHARED.is_dir():
        pytest.skip(f"shared/ not found at {SHARED}")
    return SHARED
