"""Codex CLI: ``model_provider`` and one ``[model_providers.<id>]`` table in config.toml.

Facts (docs/observed/clients.md): ``wire_api = "responses"`` is the only accepted value, built-in ids
(openai, ollama, …) cannot be redefined, the legacy ``[profiles]`` table is rejected, and the
key is read from the variable named by ``env_key`` (never stored in config.toml). With
``profile_file`` the same keys go to ``<name>.config.toml``, which ``codex --profile <name>``
loads on top of config.toml, so config.toml itself is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eloledger.clientfacts import CODEX_BUILTIN_PROVIDERS, codex_home
from eloledger.profiles.edit import MISSING
from eloledger.profiles.model import Profile
from eloledger.profiles.writers import FileTarget

USER_PROVIDER = "user_provider"  # [profiles.X.codex] user_provider = "<id>": the user's own table


def user_provider(profile: Profile, current: Mapping[str, Any]) -> str | None:
    """The user's own provider table this profile points at, when config.toml still has it.

    An imported profile keeps the id of the table it was found in; switching back only sets
    ``model_provider`` again, so ``query_params``, headers and comments come back untouched.
    """
    override = profile.overrides.get("codex")
    pid = override.extra.get(USER_PROVIDER) if override else None
    providers = current.get("model_providers", {})
    if pid and isinstance(providers, dict) and isinstance(providers.get(pid), dict):
        return pid
    return None


def provider_id(profile: Profile, current: Mapping[str, Any], owned: set[tuple[str, ...]]) -> str:
    """A provider id that is not built in and does not clobber a table the user wrote."""
    override = profile.overrides.get("codex")
    wanted = (override.extra.get("provider_id") if override else None) or profile.name
    wanted = re.sub(r"[^A-Za-z0-9_-]", "-", wanted)
    providers = current.get("model_providers", {})
    taken_by_user = (
        isinstance(providers, dict)
        and wanted in providers
        and ("model_providers", wanted) not in owned
    )
    if wanted in CODEX_BUILTIN_PROVIDERS or taken_by_user:
        wanted = f"eloledger-{wanted}"
    return wanted


def key_env(profile: Profile) -> str:
    """The variable Codex reads the key from (the profile's, or one `eloledger env` exports)."""
    override = profile.overrides.get("codex")
    if override and override.extra.get("env_key"):
        return override.extra["env_key"]
    if profile.key_env and not profile.key_in_secrets:
        return profile.key_env
    return "ELOLEDGER_" + re.sub(r"[^A-Za-z0-9]", "_", profile.name).upper() + "_API_KEY"


def config_path(profile: Profile, env: Mapping[str, str] | None, profile_file: bool) -> Path:
    """config.toml, or ``<name>.config.toml`` that ``codex --profile <name>`` loads on top."""
    name = f"{profile.name}.config.toml" if profile_file else "config.toml"
    return codex_home(env) / name


def targets(
    profile: Profile,
    current: Mapping[str, Any],
    owned: set[tuple[str, ...]],
    env: Mapping[str, str] | None = None,
    *,
    profile_file: bool = False,
) -> list[FileTarget]:
    var = key_env(profile)
    own = user_provider(profile, current)
    values: dict[tuple[str, ...], Any]
    if own:
        values = {("model_provider",): own}
    else:
        pid = provider_id(profile, current, owned)
        table = {
            "name": profile.name,
            "base_url": profile.client_base_url("codex"),
            "env_key": var,
            "wire_api": "responses",
        }
        values = {("model_provider",): pid, ("model_providers", pid): table}
    model = profile.client_model("codex")
    if model:
        values[("model",)] = model
    if var == profile.key_env:
        notes = [f"codex: reads the key from ${var}; export it in the shell that runs codex"]
    else:
        notes = [f'codex: reads the key from ${var}; run eval "$(eloledger env {profile.name})"']
    if current.get("profiles", MISSING) is not MISSING or "profile" in current:
        notes.append(
            "codex: config.toml has a legacy [profiles] table or 'profile =' key, which Codex "
            "rejects since 0.134; eloledger leaves it to you"
        )
    if profile_file:
        notes.append(f"codex: run 'codex --profile {profile.name}' to use this gateway")
    path = config_path(profile, env, profile_file)
    return [FileTarget("codex", path, "toml", values, notes=notes)]
