"""Where each real client keeps its settings and which ids it reserves (facts/clients.md).

Read-only facts shared by the profile writers and the doctor; both must agree with them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CODEX_BUILTIN_PROVIDERS = frozenset({"openai", "ollama", "lmstudio", "amazon-bedrock"})
GEMINI_AUTH_SELECTED_TYPE = "gemini-api-key"
ANTHROPIC_MODEL_VARS = (
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",  # deprecated in favour of ANTHROPIC_DEFAULT_HAIKU_MODEL
)


def home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or os.path.expanduser("~"))


def claude_settings_paths(
    env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> dict[str, Path]:
    """Claude Code settings files by scope, lowest precedence first (user < project < local)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    config_dir = (
        Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home(env) / ".claude"
    )
    return {
        "user": config_dir / "settings.json",
        "project": cwd / ".claude" / "settings.json",
        "local": cwd / ".claude" / "settings.local.json",
    }


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home(env) / ".codex"


def gemini_dir(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / ".gemini"


def gemini_env_candidates(
    env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> list[Path]:
    """The .env files Gemini CLI considers, in the order it looks (the first found is used)."""
    cwd = Path.cwd() if cwd is None else cwd
    found: list[Path] = []
    for folder in [cwd, *cwd.parents]:
        found.append(folder / ".gemini" / ".env")
        found.append(folder / ".env")
    found.append(gemini_dir(env) / ".env")
    found.append(home(env) / ".env")
    seen: set[Path] = set()
    return [p for p in found if not (p in seen or seen.add(p))]
