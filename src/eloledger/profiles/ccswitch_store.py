"""Read CC Switch's provider store as it is on disk, in each of its layouts (never written).

The layouts, as read from CC Switch's public source (github.com/farion1231/cc-switch:
``src-tauri/src/provider.rs``, ``app_config.rs``, ``database/schema.rs``):

* v3.0: ``~/.cc-switch/config.json`` is ``{"providers": {ID: PROVIDER}, "current": ID}``,
  Claude Code only.
* v3.1 to v3.7: the same file is ``{"version": 2, "claude": {"providers", "current"},
  "codex": {...}, "gemini": {...}, "mcp": ..., ...}``.
* v3.8 on: ``~/.cc-switch/cc-switch.db`` (SQLite), table ``providers`` with ``id, app_type,
  name, settings_config`` (JSON text), ``website_url, category, notes, meta`` (JSON text),
  ``is_current``; the old file is renamed ``config.json.migrated``.

What a provider's settings mean is :mod:`eloledger.profiles.ccswitch`'s business.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from eloledger.errors import UserError
from eloledger.textsafe import visible

# CC Switch's own app types, as its files spell them (eloledger's names: ccswitch.CLIENT_OF_APP)
APPS = ("claude", "codex", "gemini")
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
