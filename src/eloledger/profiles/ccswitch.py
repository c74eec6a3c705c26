"""Read CC Switch's provider store into eloledger profiles (``profile import cc-switch``).

Why: users who switch providers with CC Switch (github.com/farion1231/cc-switch) already have
every gateway, key and model typed in there; re-entering them by hand is where URLs lose their
``/v1`` and keys get pasted into the wrong field. The store is only read, never written.

Its format, as read from CC Switch's public source (``src-tauri/src/provider.rs``,
``app_config.rs``, ``codex_config.rs``, ``database/schema.rs``):

* v3.0: ``~/.cc-switch/config.json`` is ``{"providers": {ID: PROVIDER}, "current": ID}``,
  Claude Code only.
* v3.1 to v3.7: the same file is ``{"version": 2, "claude": {"providers", "current"},
  "codex": {...}, "gemini": {...}, "mcp": ..., ...}``.
* v3.8 on: ``~/.cc-switch/cc-switch.db`` (SQLite), table ``providers`` with ``id, app_type,
  name, settings_config`` (JSON text), ``website_url, category, notes, meta`` (JSON text),
  ``is_current``; the old file is renamed ``config.json.migrated``.

A PROVIDER is ``{id, name, settingsConfig, websiteUrl?, category?, notes?, meta?}``; its
``settingsConfig`` is the client's own config: Claude ``{"env": {ANTHROPIC_BASE_URL,
ANTHROPIC_AUTH_TOKEN | ANTHROPIC_API_KEY, ANTHROPIC_MODEL, ANTHROPIC_DEFAULT_*_MODEL}}``
(``meta.apiKeyField`` names the key variable), Codex ``{"auth": {"OPENAI_API_KEY"}, "config":
"<config.toml text>"}`` (the active ``[model_providers.X]`` holds ``base_url``), Gemini
``{"env": {GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY | GOOGLE_API_KEY, GEMINI_MODEL}}``.

Each provider becomes one profile serving its client; its key goes to the 0600 secrets file.
A setting eloledger has no place for is named in the result (never copied: an unknown
variable may hold a secret), so nothing is dropped silently.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import tomllib

from eloledger.errors import UserError
from eloledger.profiles.model import ClientOverride, Profile, derive_base_url
from eloledger.redact import register_secret
from eloledger.textsafe import visible

APPS = ("claude", "codex", "gemini")
_CLIENTS = {"claude": ["claude", "anthropic"], "codex": ["codex", "openai"], "gemini": ["gemini"]}
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
_JSON_FIX = "repair it (CC Switch keeps config.json.bak beside it) and run the import again"


@dataclass
class Provider:
    """One CC Switch provider as stored, before it becomes a profile."""

    app: str
    id: str
    name: str
    settings: Any
    where: str  # file and the provider's place in it, for errors
    website: str = ""
    notes: str = ""
    meta: Any = None
    current: bool = False


@dataclass
class Imported:
    """A profile made from one provider, its key (stored 0600, never shown) and what stayed."""

    profile: Profile
    key: str | None
    provider: Provider
    left_out: list[str] = field(default_factory=list)


@dataclass
class Store:
    path: Path
    layout: str  # which CC Switch format was read
    providers: list[Provider]
    skipped: dict[str, int] = field(default_factory=dict)  # other apps' providers: app -> count


def locate(path: Path | None) -> Path:
    """The store to read: PATH as given (a folder, config.json or cc-switch.db), else
    ``~/.cc-switch``; in a folder the database (v3.8 on) wins over config.json."""
    given = path if path is not None else Path.home() / ".cc-switch"
    if given.is_dir():
        for name in ("cc-switch.db", "config.json"):
            if (given / name).is_file():
                return given / name
        raise UserError(
            f"{given}: no cc-switch.db or config.json in it",
            fix="give the path of CC Switch's cc-switch.db or config.json",
        )
    if not given.is_file():
        raise UserError(
            f"{given}: no such file",
            fix="give the path of CC Switch's folder (~/.cc-switch), cc-switch.db or config.json",
        )
    return given


def read_store(path: Path) -> Store:
    """Every provider of the store at ``path`` (SQLite or JSON, told apart by content)."""
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head.startswith(b"SQLite format 3\x00"):
        return _read_db(path)
    return _read_json(path)


def _read_json(path: Path) -> Store:
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise UserError(f"{path}:1: not UTF-8 text, so not CC Switch's config.json",
                        fix=_JSON_FIX) from None  # fmt: skip
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}:{exc.lineno}: not valid JSON: {exc.msg} (line {exc.lineno}, column "
            f"{exc.colno}); nothing was imported",
            fix=_JSON_FIX,
        ) from None
    if not isinstance(data, dict):
        raise UserError(f"{path}:1: the top level is not a JSON object", fix=_JSON_FIX)
    if "version" not in data and isinstance(data.get("providers"), dict):
        managers, layout = {"claude": data}, "config.json v1 (CC Switch 3.0)"
    else:
        managers = {k: v for k, v in data.items() if isinstance(v, dict) and "providers" in v}
        layout = f"config.json v{data.get('version', 2)} (CC Switch 3.1 to 3.7)"
    store = Store(path, layout, [])
    for app, manager in managers.items():
        providers = manager.get("providers")
        if not isinstance(providers, dict):
            raise UserError(f"{path}: {app}.providers is not an object", fix=_JSON_FIX)
        if app not in APPS:
            store.skipped[app] = store.skipped.get(app, 0) + len(providers)
            continue
        for pid, entry in providers.items():
            where = f"{path}: {app}.providers.{visible(str(pid))}"
            if not isinstance(entry, dict):
                raise UserError(f"{where}: not an object", fix=_JSON_FIX)
            store.providers.append(
                Provider(
                    app=app,
                    id=str(entry.get("id") or pid),
                    name=str(entry.get("name") or pid),
                    settings=entry.get("settingsConfig"),
                    where=where,
                    website=str(entry.get("websiteUrl") or ""),
                    notes=str(entry.get("notes") or ""),
                    meta=entry.get("meta"),
                    current=manager.get("current") == pid,
                )
            )
    return store


def _read_db(path: Path) -> Store:
    """The ``providers`` table, opened read-only (CC Switch may be running)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    fix = "give CC Switch's cc-switch.db (v3.8 or later) or its config.json"
    try:
        with sqlite3.connect(uri, uri=True) as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM providers").fetchall()
    except sqlite3.DatabaseError as exc:
        raise UserError(f"{path}: cannot read CC Switch's providers table ({exc})", fix=fix) from None
    store = Store(path, "cc-switch.db (CC Switch 3.8 or later)", [])
    for row in sorted(rows, key=lambda r: (str(r["app_type"]), _order(r), str(r["id"]))):
        app, pid = str(row["app_type"]), str(row["id"])
        if app not in APPS:
            store.skipped[app] = store.skipped.get(app, 0) + 1
            continue
        where = f"{path}: providers row id={visible(pid)!r} app_type={app}"
        store.providers.append(
            Provider(
                app=app,
                id=pid,
                name=str(row["name"] or pid),
                settings=_json_column(row, "settings_config", where),
                where=where,
                website=str(_column(row, "website_url") or ""),
                notes=str(_column(row, "notes") or ""),
                meta=_json_column(row, "meta", where),
                current=bool(_column(row, "is_current")),
            )
        )
    return store


def _column(row: sqlite3.Row, name: str) -> Any:
    return row[name] if name in row.keys() else None  # noqa: SIM118 (in a Row: its values)


def _order(row: sqlite3.Row) -> int:
    index = _column(row, "sort_index")
    return index if isinstance(index, int) else 1 << 30


def _json_column(row: sqlite3.Row, name: str, where: str) -> Any:
    text = _column(row, name)
    if text is None or text == "":
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise UserError(
            f"{where}: {name} is not valid JSON ({exc})",
            fix="repair that row in CC Switch (edit and save the provider) and import again",
        ) from None


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
    """``<provider name>-<app>`` as a profile name (letters, digits, '.', '_', '-')."""
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
