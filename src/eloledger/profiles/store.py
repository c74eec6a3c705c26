"""The profile store: profiles.toml (no keys) and a separate 0600 secrets file.

Why two files: the profiles file is something users share, diff and commit; a key must never
land in it. A key is either a reference to an environment variable (``key_env``) or a value
in ``secrets.toml`` (mode 0600) next to it. Both files are edited with tomlkit so the
user's own comments in them survive every save.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import tomlkit
from tomlkit.exceptions import ParseError

from eloledger import locations
from eloledger.errors import UserError
from eloledger.fsutil import atomic_write, read_config_text
from eloledger.profiles.model import Profile
from eloledger.redact import register_secret

config_dir = locations.config_dir
data_dir = locations.data_dir
state_dir = locations.state_dir


def profiles_path() -> Path:
    return config_dir() / "profiles.toml"


def secrets_path() -> Path:
    return config_dir() / "secrets.toml"


def _load_doc(path: Path) -> tomlkit.TOMLDocument:
    text = read_config_text(path)
    if text is None:
        return tomlkit.document()
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise UserError(
            f"{path}:{exc.line}: does not parse as TOML (line {exc.line}, column {exc.col})",
            fix="fix or remove the file",
        ) from None


def load_profiles() -> dict[str, Profile]:
    """Every profile in the store, by name (an empty store gives {})."""
    path = profiles_path()
    doc = _load_doc(path)
    tables = doc.get("profiles", {})
    if not isinstance(tables, dict):
        raise UserError(f"{path}: 'profiles' must be a table of [profiles.NAME] tables")
    result: dict[str, Profile] = {}
    text = read_config_text(path) or ""
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise UserError(f"{path}: [profiles.{name}] must be a table")
        lines = field_lines(text, name)
        result[name] = Profile.from_table(name, table.unwrap(), where=str(path), lines=lines)
    return result


_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\-\"' ]+?)\s*=")


def field_lines(text: str, name: str) -> dict[str, int]:
    """Where each field of ``[profiles.NAME]`` sits: ``{"": header, "key_env": 5,
    "codex.env_key": 9, ...}`` (best effort, for ``file:line`` in errors)."""
    out: dict[str, int] = {}
    table: tuple[str, ...] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            try:
                keys = _dotted(header.group(1))
            except ParseError:
                table = None
                continue
            table = tuple(keys[2:]) if keys[:2] == ["profiles", name] else None
            if table is not None:
                out.setdefault(".".join(table), number)
            continue
        key = _KEY.match(line)
        if table is None or not key:
            continue
        try:
            dotted = [*table, *_dotted(key.group(1))]
        except ParseError:
            continue
        out.setdefault(".".join(dotted), number)
    return out


def _dotted(key: str) -> list[str]:
    """A TOML dotted key as its parts (``a."b.c"`` -> ``['a', 'b.c']``)."""
    node: object = tomlkit.parse(f"{key} = 0").unwrap()
    parts: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        part = next(iter(node))
        parts.append(part)
        node = node[part]
    return parts


def get_profile(name: str) -> Profile:
    """The named profile; a built-in preset when the store has no profile of that name."""
    from eloledger.profiles.presets import PRESETS

    profiles = load_profiles()
    if name in profiles:
        return profiles[name]
    if name in PRESETS:
        return PRESETS[name]
    known = ", ".join(sorted(profiles)) or "none yet"
    raise UserError(
        f"unknown profile {name!r} (profiles: {known}; presets: {', '.join(sorted(PRESETS))})",
        fix="add it with 'eloledger profile add NAME --base-url URL' or pick a preset",
    )


def save_profile(profile: Profile) -> Path:
    """Add or replace one profile; other profiles and comments in the file are kept."""
    profile.validate()
    path = profiles_path()
    doc = _load_doc(path)
    if "profiles" not in doc:
        doc["profiles"] = tomlkit.table(is_super_table=True)
    table = tomlkit.table()
    for key, value in profile.to_table().items():
        if isinstance(value, dict):
            sub = tomlkit.table()
            sub.update(value)
            table[key] = sub
        else:
            table[key] = value
    doc["profiles"][profile.name] = table
    return atomic_write(path, tomlkit.dumps(doc))


def remove_profile(name: str) -> None:
    """Remove a profile and its stored key."""
    path = profiles_path()
    doc = _load_doc(path)
    if name not in doc.get("profiles", {}):
        raise UserError(f"unknown profile {name!r}", fix="see 'eloledger profile list'")
    del doc["profiles"][name]
    atomic_write(path, tomlkit.dumps(doc))
    delete_secret(name)


# --- keys ---------------------------------------------------------------------------------


def set_secret(name: str, key: str) -> Path:
    """Store a profile's key in the 0600 secrets file."""
    key = key.strip()
    if not key:
        raise UserError("empty key", fix="pass the key on stdin or with --key-env VAR")
    register_secret(key)
    path = secrets_path()
    doc = _load_doc(path)
    if "keys" not in doc:
        doc["keys"] = tomlkit.table()
    doc["keys"][name] = key
    return atomic_write(path, tomlkit.dumps(doc), secret=True)


def delete_secret(name: str) -> None:
    path = secrets_path()
    doc = _load_doc(path)
    keys = doc.get("keys")
    if keys is not None and name in keys:
        del keys[name]
        atomic_write(path, tomlkit.dumps(doc), secret=True)


def stored_secret(name: str) -> str | None:
    doc = _load_doc(secrets_path())
    value = doc.get("keys", {}).get(name)
    if value:
        register_secret(str(value))
        return str(value)
    return None


def hold_secret(ref: str, value: str) -> None:
    """Keep a user's own secret that a switch took over (eloledger's records hold only ``ref``)."""
    register_secret(value)
    path = secrets_path()
    doc = _load_doc(path)
    held = doc.setdefault("held", tomlkit.table())
    if held.get(ref) != value:
        held[ref] = value
        atomic_write(path, tomlkit.dumps(doc), secret=True)


def held_secret(ref: str) -> str | None:
    """The secret kept under ``ref`` by :func:`hold_secret` (None when it is gone)."""
    value = _load_doc(secrets_path()).get("held", {}).get(ref)
    if value is None:
        return None
    register_secret(str(value))
    return str(value)


def resolve_key(profile: Profile) -> str | None:
    """The profile's key: from the secrets file or its environment variable (None if unset)."""
    key: str | None = None
    if profile.key_in_secrets:
        key = stored_secret(profile.name)
    if key is None and profile.key_env:
        key = os.environ.get(profile.key_env) or None
    if key:
        register_secret(key)
    return key
