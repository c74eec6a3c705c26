"""Where each real client keeps its settings and which ids it reserves (docs/observed/clients.md).

Read-only facts shared by the profile writers and the doctor; both must agree with them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# The one spelling of each client eloledger switches, runs, imports and checks: profile targets
# and clients, doctor targets, agent arms, import kinds and watch flags all use these names.
CLAUDE_CODE, CODEX, GEMINI_CLI, SHELL = "claude-code", "codex", "gemini-cli", "shell"
CODING_CLIS = (CLAUDE_CODE, CODEX, GEMINI_CLI)
CLIENT_NAMES = (*CODING_CLIS, SHELL)
# Spellings eloledger used before (in profiles.toml, its ownership record and backups, ``--to``
# and ``--clients``, ``import gemini``): still read, never written.
OLD_CLIENT_NAMES = {"claude": CLAUDE_CODE, "gemini": GEMINI_CLI}


def client_name(name: str) -> str:
    """``name`` in the current spelling: an old one (``claude``, ``gemini``) read from a user's
    file or command line becomes the new one; any other name is returned as it is."""
    return OLD_CLIENT_NAMES.get(name, name)


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
    CODEX: "openai",
    "anthropic": "anthropic",
    CLAUDE_CODE: "anthropic",
    "gemini": "gemini",  # the wire protocol
    GEMINI_CLI: "gemini",
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
# character outside [A-Za-z0-9-_./] removed from their values. Observed too: with
# ``--skip-trust`` (or GEMINI_CLI_TRUST_WORKSPACE=true) the ``.gemini/.env`` IS read; without,
# a key that is only in a skipped ``.env`` stops ``gemini -p`` earlier, with exit 41
# ("must specify the GEMINI_API_KEY"), before the exit-55 trust check.
GEMINI_UNTRUSTED_ENV_WHITELIST = frozenset(
    {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"}
)


GEMINI_TRUST_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


def gemini_trusted_folders_path(env: Mapping[str, str] | None = None) -> Path:
    """``{"<folder>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}``; the longest match wins.

    ``$GEMINI_CLI_TRUSTED_FOLDERS_PATH`` moves it (Gemini CLI's ``Storage``).
    """
    env = os.environ if env is None else env
    moved = env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    return Path(moved) if moved else gemini_dir(env) / "trustedFolders.json"


def gemini_settings_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """Settings files that decide ``security.folderTrust.enabled``, lowest precedence first.

    Gemini CLI checks trust before it reads the workspace settings, so only the system
    defaults, the user file and the system file count (in that merge order).
    """
    env = os.environ if env is None else env
    system = Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or _gemini_system_settings())
    defaults = env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
    return [
        Path(defaults) if defaults else system.parent / "system-defaults.json",
        gemini_dir(env) / "settings.json",
        system,
    ]


def _gemini_system_settings() -> str:
    if sys.platform == "darwin":
        return "/Library/Application Support/GeminiCli/settings.json"
    if sys.platform == "win32":
        return "C:\\ProgramData\\gemini-cli\\settings.json"
    return "/etc/gemini-cli/settings.json"


@dataclass(frozen=True)
class GeminiTrust:
    """Whether Gemini CLI trusts a folder, and why (its ``checkPathTrust``, CLI 0.61).

    ``trusted`` is None when folder trust is disabled in settings: then everything is read,
    as in a trusted folder. ``error`` is set when trustedFolders.json is broken: Gemini CLI
    then refuses to start.
    """

    trusted: bool | None
    reason: str  # e.g. "$GEMINI_CLI_TRUST_WORKSPACE=true", "'/work' is DO_NOT_TRUST"
    source: str  # "env", "settings" or "file" (trustedFolders.json), as Gemini CLI names it
    error: str | None = None


def gemini_folder_trust(
    env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> GeminiTrust:
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else Path(cwd)
    if env.get("GEMINI_RESTRICTED_MODE") == "true":
        return GeminiTrust(False, "$GEMINI_RESTRICTED_MODE=true", "env")
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return GeminiTrust(False, "$GEMINI_CLI_TRUST_WORKSPACE=false", "env")
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return GeminiTrust(True, "$GEMINI_CLI_TRUST_WORKSPACE=true", "env")
    enabled, where = True, "folder trust is on by default"
    for path in gemini_settings_paths(env):
        doc = _load_json(path)
        security = doc.get("security") if isinstance(doc, dict) else None
        value = security.get("folderTrust") if isinstance(security, dict) else None
        if isinstance(value, dict) and isinstance(value.get("enabled"), bool):
            enabled, where = value["enabled"], f"{path}: security.folderTrust.enabled"
    if not enabled:
        return GeminiTrust(None, f"folder trust disabled ({where} = false)", "settings")
    path = gemini_trusted_folders_path(env)
    try:
        rules = _load_json(path, strict=True) or {}
    except ValueError as exc:
        return GeminiTrust(False, "the file is broken", "file", f"{path}: {exc}")
    if not isinstance(rules, dict):
        return GeminiTrust(False, "the file is broken", "file", f"{path}: not a JSON object")
    bad = [f"{k!r}: {v!r}" for k, v in rules.items() if v not in GEMINI_TRUST_LEVELS]
    if bad:
        levels = ", ".join(GEMINI_TRUST_LEVELS)
        return GeminiTrust(
            False,
            "the file is broken",
            "file",
            f"{path}: invalid trust level {bad[0]} (possible values: {levels})",
        )
    here = os.path.realpath(cwd)
    best: tuple[int, str, str] | None = None
    for rule, level in rules.items():
        rule_path = os.path.normpath(os.path.join(str(cwd), rule))
        folder = os.path.dirname(rule_path) if level == "TRUST_PARENT" else rule_path
        if _is_within(here, os.path.realpath(folder)) and (
            best is None or len(rule_path) > best[0]
        ):
            best = (len(rule_path), rule, level)
    if best is None:
        return GeminiTrust(False, f"no rule covers {cwd}", "file")
    return GeminiTrust(best[2] != "DO_NOT_TRUST", f"{best[1]!r} is {best[2]}", "file")


def gemini_folder_trusted(
    env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> bool | None:
    """True/False as Gemini CLI decides for ``cwd`` (no rule counts as not trusted when it
    loads .env files); None when folder trust is disabled in settings."""
    return gemini_folder_trust(env, cwd).trusted


def _is_within(child: str, parent: str) -> bool:
    rel = os.path.relpath(child, parent)
    return rel == "." or not (rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel))


def _load_json(path: Path, *, strict: bool = False) -> object:
    """A JSON file that may hold // and /* */ comments (Gemini CLI strips them); None if absent.

    Unparsable: None, or ValueError when ``strict``.
    """
    from eloledger.jsonc import blank_comments

    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        return json.loads(blank_comments(text)) if text.strip() else {}
    except json.JSONDecodeError as exc:
        if strict:
            raise ValueError(f"does not parse as JSON: {exc.msg} (line {exc.lineno})") from exc
        return None


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
