"""Claude Code: the ``env`` block of settings.json at user, project or local scope.

Claude Code sends ``ANTHROPIC_AUTH_TOKEN`` as ``Authorization: Bearer`` and
``ANTHROPIC_API_KEY`` as ``x-api-key``, and sends *both* headers when both are set, so we
write exactly one and remove the other. A settings ``env`` value beats the shell, so a key
the profile takes from the shell is removed from the file rather than left stale. Project
settings are usually committed, so at project scope the key goes to settings.local.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from eloledger.clientfacts import claude_settings_paths
from eloledger.profiles.model import MODEL_ROLES, Profile
from eloledger.profiles.writers import FileTarget, missing_key

AUTH_VARS = {"bearer": "ANTHROPIC_AUTH_TOKEN", "x-api-key": "ANTHROPIC_API_KEY"}


def targets(
    profile: Profile,
    key: str | None,
    scope: str = "user",
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> list[FileTarget]:
    paths = claude_settings_paths(env, cwd)
    auth_var = AUTH_VARS[profile.auth]
    other_var = AUTH_VARS["x-api-key" if profile.auth == "bearer" else "bearer"]
    values: dict[tuple[str, ...], str] = {
        ("env", "ANTHROPIC_BASE_URL"): profile.client_base_url("claude-code")
    }
    model = profile.client_model("claude-code")
    if model:
        values[("env", "ANTHROPIC_MODEL")] = model
    for role in MODEL_ROLES:
        if profile.models.get(role):
            values[("env", f"ANTHROPIC_DEFAULT_{role.upper()}_MODEL")] = profile.models[role]
    remove = {("env", other_var): f"Claude Code would send both {auth_var} and {other_var}"}
    key_values: dict[tuple[str, ...], str] = {}
    notes: list[str] = []
    if key:
        key_values[("env", auth_var)] = key
    elif profile.key_env == auth_var:
        remove[("env", auth_var)] = f"the key comes from ${auth_var} in the shell"
        notes.append(f"claude-code: the key is read from ${auth_var} in the shell")
    else:
        raise missing_key(profile, "Claude Code needs the key in settings.json")
    if scope == "project":
        local = paths["local"]
        shared = FileTarget("claude-code", paths["project"], "json", values, dict(remove))
        shared.remove.update(
            {k: "keys never go into committed project settings" for k in key_values}
        )
        private = FileTarget(
            "claude-code", local, "json", key_values, dict(remove), secret=bool(key)
        )
        private.notes = notes + ["claude-code: the key goes to settings.local.json (not committed)"]
        return [shared, private]
    values.update(key_values)
    return [
        FileTarget(
            "claude-code", paths[scope], "json", values, remove, secret=bool(key), notes=notes
        )
    ]
