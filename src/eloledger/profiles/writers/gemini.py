"""Gemini CLI: ``~/.gemini/.env`` for the key, base URL and model, plus the auth type.

Without ``security.auth.selectedType = "gemini-api-key"`` in ``~/.gemini/settings.json``
non-interactive runs fail with "Invalid auth method selected." (docs/observed/clients.md). A .env
never overrides a variable already set in the shell, so a key taken from the shell's
``GEMINI_API_KEY`` is not copied into the file. Observed with Gemini CLI 0.61: the
``.gemini/.env`` files are read only in a *trusted* folder (folder trust is on by default;
headless runs in an untrusted folder stop with exit 55 unless ``--skip-trust`` or
``GEMINI_CLI_TRUST_WORKSPACE=true``). We never change trust settings for the user; we say so.
"""

from __future__ import annotations

from collections.abc import Mapping

from eloledger.clientfacts import GEMINI_AUTH_SELECTED_TYPE, gemini_dir
from eloledger.profiles.model import Profile
from eloledger.profiles.writers import FileTarget, missing_key


def targets(
    profile: Profile, key: str | None, env: Mapping[str, str] | None = None
) -> list[FileTarget]:
    folder = gemini_dir(env)
    values: dict[tuple[str, ...], str] = {
        ("GOOGLE_GEMINI_BASE_URL",): profile.client_base_url("gemini-cli")
    }
    model = profile.client_model("gemini-cli")
    if model:
        values[("GEMINI_MODEL",)] = model
    remove: dict[tuple[str, ...], str] = {}
    notes = [
        "gemini-cli: ~/.gemini/.env is read only in trusted folders (or with --skip-trust); "
        f'elsewhere use eval "$(eloledger env {profile.name})"'
    ]
    if key:
        values[("GEMINI_API_KEY",)] = key
    elif profile.key_env == "GEMINI_API_KEY":
        remove[("GEMINI_API_KEY",)] = "the key comes from $GEMINI_API_KEY in the shell"
        notes.append("gemini-cli: the key is read from $GEMINI_API_KEY in the shell")
    else:
        raise missing_key(profile, "Gemini CLI needs the key in ~/.gemini/.env")
    env_file = FileTarget(
        "gemini-cli", folder / ".env", "env", values, remove, secret=bool(key), notes=notes
    )
    settings = FileTarget(
        "gemini-cli",
        folder / "settings.json",
        "jsonc",
        {("security", "auth", "selectedType"): GEMINI_AUTH_SELECTED_TYPE},
    )
    return [env_file, settings]
