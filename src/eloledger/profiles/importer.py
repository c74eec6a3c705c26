"""Adopt the user's live configs as a profile (``eloledger profile import``).

Why: the first switch must be reversible. Before eloledger writes anything, the settings the
user already has (Claude Code's env block, Codex's active custom provider, Gemini's .env) are
captured as a profile, and eloledger records that it now owns those keys, so switching away
removes them cleanly and switching back restores them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.clientfacts import (
    CODEX_BUILTIN_PROVIDERS,
    claude_settings_paths,
    codex_home,
    gemini_dir,
)
from eloledger.fsutil import read_config_text, real_path, sha256_text
from eloledger.profiles import ownership
from eloledger.profiles.edit import envedit, jsonedit, tomledit
from eloledger.profiles.model import (
    CLIENTS,
    MODEL_ROLES,
    ClientOverride,
    Profile,
    check_var,
    derive_base_url,
)
from eloledger.profiles.ownership import FileRecord, value_hash
from eloledger.profiles.store import set_secret
from eloledger.profiles.writers.claude import AUTH_VARS
from eloledger.profiles.writers.codex import USER_PROVIDER
from eloledger.textsafe import refuse_control

# the SDK that speaks the client's protocol
_SDK_OF = {"anthropic": "claude-code", "openai": "codex"}
_CLAUDE_MODEL_VARS = {f"ANTHROPIC_DEFAULT_{r.upper()}_MODEL": r for r in MODEL_ROLES}


@dataclass
class Found:
    """What the live configs say, before it becomes a profile."""

    urls: dict[str, str] = field(default_factory=dict)  # client -> base URL
    models: dict[str, str] = field(default_factory=dict)  # client -> model
    roles: dict[str, str] = field(default_factory=dict)
    auth: str | None = None
    key: str | None = None
    key_env: str | None = None
    codex_provider: str | None = None  # the user's own [model_providers.<id>] table
    owned: dict[Path, dict[tuple[str, ...], Any]] = field(default_factory=dict)  # file -> keys
    sources: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.urls


def scan(env: Mapping[str, str] | None = None) -> Found:
    """Read (never write) the live user-scope configs of all three clients."""
    env = os.environ if env is None else env
    found = Found()
    path = claude_settings_paths(env)["user"]
    text = read_config_text(path)
    if text:
        block = jsonedit.parse(text, path).get("env", {})
        if isinstance(block, dict) and block.get("ANTHROPIC_BASE_URL"):
            keys: dict[tuple[str, ...], Any] = {}
            found.urls["claude-code"] = str(block["ANTHROPIC_BASE_URL"])
            keys[("env", "ANTHROPIC_BASE_URL")] = block["ANTHROPIC_BASE_URL"]
            for form, var in AUTH_VARS.items():
                if block.get(var) and found.key is None:
                    found.auth, found.key = form, str(block[var])
                    keys[("env", var)] = block[var]
            if block.get("ANTHROPIC_MODEL"):
                found.models["claude-code"] = str(block["ANTHROPIC_MODEL"])
                keys[("env", "ANTHROPIC_MODEL")] = block["ANTHROPIC_MODEL"]
            for var, role in _CLAUDE_MODEL_VARS.items():
                if block.get(var):
                    found.roles[role] = str(block[var])
                    keys[("env", var)] = block[var]
            found.owned[path] = keys
            found.sources.append(str(path))
    path = codex_home(env) / "config.toml"
    text = read_config_text(path)
    if text:
        data = tomledit.parse(text, path)
        pid = data.get("model_provider")
        table = data.get("model_providers", {}).get(pid) if isinstance(pid, str) else None
        if pid not in CODEX_BUILTIN_PROVIDERS and isinstance(table, dict) and table.get("base_url"):
            found.urls["codex"] = str(table["base_url"])
            if "env_key" in table:  # printed into export lines later: checked here, where read
                check_var(table["env_key"], f"{path}:{_line_of(text, 'env_key')}", "env_key")
            found.key_env = found.key_env or table.get("env_key")
            found.codex_provider = pid
            # Only the pointer is adopted: the provider table (and the model) are the user's
            # own, so a switch away leaves them byte for byte and a switch back points at them.
            keys = {("model_provider",): pid}
            if data.get("model"):
                found.models["codex"] = str(data["model"])
                refuse_control(found.models["codex"], f"{path}:{_line_of(text, 'model')}: model")
            found.owned[path] = keys
            found.sources.append(str(path))
    path = gemini_dir(env) / ".env"
    text = read_config_text(path)
    if text:
        values = envedit.parse(text, path)
        if values.get("GOOGLE_GEMINI_BASE_URL"):
            found.urls["gemini-cli"] = values["GOOGLE_GEMINI_BASE_URL"]
            keys = {("GOOGLE_GEMINI_BASE_URL",): values["GOOGLE_GEMINI_BASE_URL"]}
            if values.get("GEMINI_MODEL"):
                found.models["gemini-cli"] = values["GEMINI_MODEL"]
                keys[("GEMINI_MODEL",)] = values["GEMINI_MODEL"]
            if values.get("GEMINI_API_KEY"):
                found.key = found.key or values["GEMINI_API_KEY"]
                keys[("GEMINI_API_KEY",)] = values["GEMINI_API_KEY"]
            found.owned[path] = keys
            found.sources.append(str(path))
    _check_text(found)
    return found


def _line_of(text: str, key: str, value: str | None = None) -> int:
    """The first line that sets ``key`` (to something holding ``value``), 1 if none does."""
    pattern = re.compile(rf"""^\s*["']?{re.escape(key)}["']?\s*[=:]""")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.search(line.strip()) and (value is None or value[:20] in line):
            return number
    for number, line in enumerate(text.splitlines(), 1):  # JSON: "KEY": "value"
        if f'"{key}"' in line:
            return number
    return 1


def _check_text(found: Found) -> None:
    """Models and URLs found go into other clients' files: no control characters."""
    for path, keys in found.owned.items():
        text = read_config_text(path) or ""
        for keypath, value in keys.items():
            if isinstance(value, str):
                where = f"{path}:{_line_of(text, keypath[-1])}: {'.'.join(keypath)}"
                refuse_control(value, where)
    for client, model in found.models.items():
        refuse_control(model, f"{client} model")


def to_profile(found: Found, name: str) -> Profile:
    """A profile that reproduces what was found (root from the first client, overrides after)."""
    first = next(iter(found.urls))
    url = found.urls[first]
    root = url.rstrip("/")
    if first == "codex" and root.endswith("/v1"):
        root = root[: -len("/v1")]
    profile = Profile(
        name=name,
        base_url=root,
        key_env=None if found.key else found.key_env,
        key_in_secrets=bool(found.key),
        auth=found.auth or "bearer",
        models=dict(found.roles),
        description="imported from " + ", ".join(found.sources),
    )
    for client, client_url in found.urls.items():
        if derive_base_url(root, client) != client_url.rstrip("/"):
            profile.overrides.setdefault(client, ClientOverride()).base_url = client_url
    # Serve only what was found: a gateway seen in Codex alone is not given to Claude Code.
    profile.clients = [c for c in CLIENTS if c in found.urls or _SDK_OF.get(c) in found.urls]
    if found.codex_provider:
        codex = profile.overrides.setdefault("codex", ClientOverride())
        codex.extra[USER_PROVIDER] = found.codex_provider
    if found.urls.get("codex") and found.key_env and found.key:
        profile.overrides.setdefault("codex", ClientOverride()).extra["env_key"] = found.key_env
    models = set(found.models.values())
    if len(models) == 1:
        profile.model = models.pop()
    else:
        for client, model in found.models.items():
            profile.overrides.setdefault(client, ClientOverride()).model = model
    return profile


def adopt(found: Found, profile: Profile) -> None:
    """Store the profile and its key (0600) and record that eloledger owns the found keys."""
    from eloledger.profiles.store import save_profile

    with ownership.state_lock():
        if found.key:
            set_secret(profile.name, found.key)
        save_profile(profile)
        ownership.save_state(adopted_state(found, profile, ownership.load_state()))


def adopted_state(found: Found, profile: Profile, state: ownership.State) -> ownership.State:
    """``state`` plus ownership of every key found (in memory: ``diff`` plans with it too)."""
    for path, keys in found.owned.items():
        real = real_path(path)
        record = FileRecord(
            sha256=sha256_text(read_config_text(path)),
            keys={k: value_hash(v) for k, v in keys.items()},
            profile=profile.name,
            target=_target_of(path),
        )
        state.files.setdefault(str(real), record)
    return state


def _target_of(path: Path) -> str:
    parts = set(path.parts)
    if ".codex" in parts or path.name == "config.toml":
        return "codex"
    if ".gemini" in parts:
        return "gemini-cli"
    return "claude-code"
