"""Read CC Switch's provider store into eloledger profiles (``profile import cc-switch``).

Why: users who switch providers with CC Switch (github.com/farion1231/cc-switch) already have
every gateway, key and model typed in there; re-entering them by hand is where URLs lose their
``/v1`` and keys get pasted into the wrong field. The store is only read, never written.

The store's layouts (config.json of v3.0 and v3.1-3.7, cc-switch.db of v3.8 on) are read by
:mod:`eloledger.profiles.ccswitch_store`. A provider is ``{id, name, settingsConfig, websiteUrl?,
category?, notes?, meta?}`` (CC Switch's ``src-tauri/src/provider.rs``); its ``settingsConfig`` is the client's own config: Claude ``{"env": {ANTHROPIC_BASE_URL,
ANTHROPIC_AUTH_TOKEN | ANTHROPIC_API_KEY, ANTHROPIC_MODEL, ANTHROPIC_DEFAULT_*_MODEL}}``
(``meta.apiKeyField`` names the key variable), Codex ``{"auth": {"OPENAI_API_KEY"}, "config":
"<config.toml text>"}`` (the active ``[model_providers.X]`` holds ``base_url``), Gemini
``{"env": {GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY | GOOGLE_API_KEY, GEMINI_MODEL}}``.

Each provider becomes one profile serving its client; its key goes to the 0600 secrets file.
A setting eloledger has no place for is named in the result (never copied: an unknown
variable may hold a secret), so nothing is dropped silently.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from eloledger.clientfacts import CLAUDE_CODE, CODEX, GEMINI_CLI
from eloledger.errors import UserError
from eloledger.profiles.ccswitch_store import Provider, Store
from eloledger.profiles.model import ClientOverride, Profile, derive_base_url
from eloledger.redact import register_secret
from eloledger.textsafe import visible

# CC Switch's app types (its own files say "claude", "codex", "gemini") -> eloledger's clients
CLIENT_OF_APP = {"claude": CLAUDE_CODE, "codex": CODEX, "gemini": GEMINI_CLI}
_CLIENTS = {
    "claude": [CLAUDE_CODE, "anthropic"],
    "codex": [CODEX, "openai"],
    "gemini": [GEMINI_CLI],
}
_WIRE = {"claude": "anthropic", "codex": "openai-responses", "gemini": "gemini"}
_ROLE_VARS = {
    "ANTHROPIC_DEFAULT_HAIKU_MODEL": "haiku",
    "ANTHROPIC_DEFAULT_SONNET_MODEL": "sonnet",
    "ANTHROPIC_DEFAULT_OPUS_MODEL": "opus",
}
_CLAUDE_USED = {"ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY",
                "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", *_ROLE_VARS}  # fmt: skip
_GEMINI_USED = {"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_MODEL"}
_CODEX_USED = {"base_url", "env_key", "wire_api", "name", "experimental_bearer_token"}
_PROVIDER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass
class Imported:
    """A profile made from one provider, its key (stored 0600, never shown) and what stayed."""

    profile: Profile
    key: str | None
    provider: Provider
    left_out: list[str] = field(default_factory=list)

    @property
    def client(self) -> str:
        """eloledger's name for the provider's client (``provider.app`` is CC Switch's)."""
        return CLIENT_OF_APP[self.provider.app]


# --- provider -> profile ----------------------------------------------------------------------


def to_profiles(store: Store) -> tuple[list[Imported], list[str]]:
    """Profiles for every provider that names a gateway, and a note per provider that names
    none (an official sign-in: nothing for eloledger to switch to)."""
    made: list[Imported] = []
    notes: list[str] = []
    names: set[str] = set()
    for provider in store.providers:
        imported = _convert(provider)
        if imported is None:
            notes.append(f"{provider.app} provider {visible(provider.name)!r}: no base URL "
                         "(an official sign-in), not imported")  # fmt: skip
            continue
        imported.left_out = [visible(item) for item in imported.left_out]  # names from a file
        imported.profile.name = _unique(imported.profile.name, names)
        names.add(imported.profile.name)
        imported.profile.validate(f"{provider.where} ({visible(provider.name)!r})")
        made.append(imported)
    return made, notes


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name[:60]}-{n}" in taken:
        n += 1
    return f"{name[:60]}-{n}"


def profile_name(provider: Provider) -> str:
    """``<provider name>-<app>`` as a profile name (letters, digits, '.', '_', '-').

    ``app`` is CC Switch's own app type (``claude``, ``codex``, ``gemini``), not eloledger's
    client name, so an import made before the client names changed is replaced by the same
    names with ``--replace``.
    """
    slug = re.sub(r"[^a-z0-9_.-]+", "-", provider.name.lower()).strip("-._")
    if not slug:
        slug = re.sub(r"[^a-z0-9_.-]+", "-", provider.id.lower()).strip("-._") or "provider"
    return f"{slug[: 63 - len(provider.app) - 1]}-{provider.app}"


def _bad(provider: Provider, what: str) -> UserError:
    return UserError(f"{provider.where}: {what}",
                     fix="repair the provider in CC Switch and import again")  # fmt: skip


def _settings(provider: Provider) -> dict[str, Any]:
    if not isinstance(provider.settings, dict):
        raise _bad(provider, "settingsConfig is not an object")
    return provider.settings


def _env(provider: Provider) -> dict[str, Any]:
    env = _settings(provider).get("env", {})
    if not isinstance(env, dict):
        raise _bad(provider, "settingsConfig.env is not an object")
    return env


def _text(env: dict[str, Any], name: str, provider: Provider) -> str | None:
    value = env.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _bad(provider, f"{name} is not a string")
    return value.strip() or None


def _convert(provider: Provider) -> Imported | None:
    return {"claude": _claude, "codex": _codex, "gemini": _gemini}[provider.app](provider)


def _new(provider: Provider, url: str, key: str | None) -> Imported:
    root = url.rstrip("/")
    if provider.app == "codex" and root.endswith("/v1"):
        root = root[: -len("/v1")]
    register_secret(key)
    bits = [f"imported from CC Switch: {provider.app} provider {visible(provider.name)!r} "
            f"(id {visible(provider.id)})"]  # fmt: skip
    if provider.website:
        bits.append(f"website {visible(provider.website)}")
    if provider.notes:
        bits.append(f"notes: {visible(' '.join(provider.notes.split()))}")
    profile = Profile(
        name=profile_name(provider),
        base_url=root,
        key_in_secrets=bool(key),
        wire_api=_WIRE[provider.app],
        clients=list(_CLIENTS[provider.app]),
        description="; ".join(bits),
    )
    for client in profile.clients:
        if derive_base_url(root, client) != url.rstrip("/"):
            profile.overrides.setdefault(client, ClientOverride()).base_url = url
    return Imported(profile, key, provider)


def _claude(provider: Provider) -> Imported | None:
    env = _env(provider)
    url = _text(env, "ANTHROPIC_BASE_URL", provider)
    if url is None:
        return None
    field_name = (provider.meta or {}).get("apiKeyField") if isinstance(provider.meta, dict) else None
    token = _text(env, "ANTHROPIC_AUTH_TOKEN", provider)
    api_key = _text(env, "ANTHROPIC_API_KEY", provider)
    use_api_key = field_name == "ANTHROPIC_API_KEY" or (api_key and not token)
    imported = _new(provider, url, (api_key or token) if use_api_key else (token or api_key))
    p = imported.profile
    p.auth = "x-api-key" if use_api_key else "bearer"
    p.model = _text(env, "ANTHROPIC_MODEL", provider)
    for var, role in _ROLE_VARS.items():
        if (model := _text(env, var, provider)) is not None:
            p.models[role] = model
    small = _text(env, "ANTHROPIC_SMALL_FAST_MODEL", provider)  # deprecated name of haiku's
    if small is not None and "haiku" not in p.models:
        p.models["haiku"] = small
    imported.left_out = [f"env.{k}" for k in env if k not in _CLAUDE_USED]
    imported.left_out += _other_settings(provider.settings, ("env",))
    return imported


def _gemini(provider: Provider) -> Imported | None:
    env = _env(provider)
    url = _text(env, "GOOGLE_GEMINI_BASE_URL", provider)
    if url is None:
        return None
    key = _text(env, "GEMINI_API_KEY", provider) or _text(env, "GOOGLE_API_KEY", provider)
    imported = _new(provider, url, key)
    imported.profile.model = _text(env, "GEMINI_MODEL", provider)
    imported.left_out = [f"env.{k}" for k in env if k not in _GEMINI_USED]
    imported.left_out += _other_settings(provider.settings, ("env",))
    return imported


def _codex(provider: Provider) -> Imported | None:
    settings = _settings(provider)
    text = settings.get("config") or ""
    if not isinstance(text, str):
        raise _bad(provider, "settingsConfig.config is not TOML text")
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(
            f"{provider.where}: settingsConfig.config is not valid TOML ({exc})",
            fix="repair the provider's config.toml in CC Switch and import again",
        ) from None
    pid = config.get("model_provider")
    providers = config.get("model_providers")
    table = providers.get(pid) if isinstance(providers, dict) and isinstance(pid, str) else None
    table = table if isinstance(table, dict) else {}
    url = table.get("base_url") or config.get("base_url")
    if not isinstance(url, str) or not url.strip():
        return None
    auth = settings.get("auth")
    key = auth.get("OPENAI_API_KEY") if isinstance(auth, dict) else None
    key = key if isinstance(key, str) and key.strip() else table.get("experimental_bearer_token")
    key = key.strip() if isinstance(key, str) and key.strip() else None
    imported = _new(provider, url.strip(), key)
    p = imported.profile
    model = config.get("model")
    p.model = model if isinstance(model, str) and model else None
    codex = p.overrides.setdefault("codex", ClientOverride())
    if isinstance(pid, str) and _PROVIDER_ID.match(pid):
        codex.extra["provider_id"] = pid  # the table id CC Switch wrote
    env_key = table.get("env_key")
    if isinstance(env_key, str) and env_key:
        if key is None:
            p.key_env = env_key  # the key stays where the user keeps it
        else:
            codex.extra["env_key"] = env_key
    left = [f"config.{k}" for k in config if k not in ("model_provider", "model_providers", "model")]
    left += [f"model_providers.{pid}.{k}" for k in table if k not in _CODEX_USED]
    if isinstance(auth, dict):
        left += [f"auth.{k}" for k in auth if k != "OPENAI_API_KEY"]
    imported.left_out = left + _other_settings(settings, ("auth", "config"))
    return imported


def _other_settings(settings: Any, used: tuple[str, ...]) -> list[str]:
    return [f"settingsConfig.{k}" for k in settings if k not in used] if isinstance(settings, dict) else []


def save(imported: list[Imported], existing: set[str], *, replace: bool) -> None:
    """Store every profile and its key (0600), or none: a name taken is refused up front."""
    from eloledger.profiles.store import delete_secret, save_profile, set_secret

    taken = sorted(i.profile.name for i in imported if i.profile.name in existing)
    if taken and not replace:
        raise UserError(
            f"profile(s) {', '.join(taken)} exist; nothing was imported",
            fix="pass --replace to overwrite them, or remove them first",
        )
    for item in imported:
        if item.key:
            set_secret(item.profile.name, item.key)
        elif item.profile.name in existing:
            delete_secret(item.profile.name)  # a replaced profile keeps no stale key
        save_profile(item.profile)
