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

# How each client (or wire protocol) joins paths to its base URL, by family: "openai" appends
# /chat/completions or /responses, so the base carries the version (/v1); "anthropic" appends
# /v1/messages and "gemini" /v1beta/models/..., so both take the root without it.
URL_FAMILY = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "openai": "openai",
    "codex": "openai",
    "anthropic": "anthropic",
    "claude": "anthropic",
    "gemini": "gemini",
}


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


# Observed in Gemini CLI 0.61 (bundle source + real runs): folder trust is on by default
# (settings security.folderTrust.enabled); a headless run in an untrusted folder stops with
# exit 55 unless --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true. In an untrusted folder no
# ``.gemini/.env`` is read at all, and from a plain ``.env`` only these variables, with every
# character outside [A-Za-z0-9-_./] removed from their values:
GEMINI_UNTRUSTED_ENV_WHITELIST = frozenset(
    {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"}
)


def gemini_trusted_folders_path(env: Mapping[str, str] | None = None) -> Path:
    """``{"<folder>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}``; the longest match wins."""
    return gemini_dir(env) / "trustedFolders.json"


def gemini_env_candidates(
    env: Mapping[str, str] | None = None, cwd: Path | None = None, *, trusted: bool = True
) -> list[Path]:
    """The .env files Gemini CLI considers, in the order it looks (the first found is used).

    ``trusted=False``: the folder is not trusted, so ``.gemini/.env`` files are skipped.
    """
    cwd = Path.cwd() if cwd is None else cwd
    found: list[Path] = []
    for folder in [cwd, *cwd.parents]:
        if trusted:
            found.append(folder / ".gemini" / ".env")
        found.append(folder / ".env")
    if trusted:
        found.append(gemini_dir(env) / ".env")
    found.append(home(env) / ".env")
    seen: set[Path] = set()
    return [p for p in found if not (p in seen or seen.add(p))]
