"""Themes are data files (TOML), not code: shipped ones plus the user's own folder.

A theme file holds the fields of :class:`textual.theme.Theme` (``name``, ``primary``, ...,
``dark``) and an optional ``[variables]`` table. Users drop files into
``platformdirs.user_config_dir("eloledger")/themes``; a broken user file is reported and skipped,
never fatal, because a typo in a colour must not lock anyone out of the app.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

import tomlkit
from textual.color import Color, ColorParseError
from textual.theme import Theme

from eloledger import locations
from eloledger.errors import UserError
from eloledger.fsutil import atomic_write

DEFAULT_THEME = "eloledger-dark"
_COLOR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
_ALLOWED = {f.name for f in dataclasses.fields(Theme)}


def shipped_theme_dir() -> Path:
    """The package's ``themes/`` folder (also reachable as the top-level ``themes`` link)."""
    return Path(str(resources.files("eloledger").joinpath("themes")))


def user_theme_dir() -> Path:
    return locations.themes_dir()


def load_theme_file(path: Path) -> Theme:
    """Parse one theme file; ``UserError`` names the file and what is wrong."""
    try:
        data = tomlkit.parse(path.read_text(encoding="utf-8")).unwrap()
    except OSError as exc:
        raise UserError(f"{path}: cannot read theme ({exc.strerror})") from exc
    except Exception as exc:  # tomlkit raises several parse error types
        raise UserError(
            f"{path}: not valid TOML: {exc}", fix="fix the syntax or remove the file"
        ) from exc
    unknown = sorted(set(data) - _ALLOWED)
    if unknown:
        raise UserError(
            f"{path}: unknown theme field(s) {', '.join(unknown)}",
            fix=f"use only: {', '.join(sorted(_ALLOWED))}",
        )
    for key in ("name", "primary"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise UserError(f"{path}: theme needs a '{key}' string")
    for key in _COLOR_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        try:
            Color.parse(value)
        except (ColorParseError, TypeError) as exc:
            raise UserError(
                f"{path}: '{key}' = {value!r} is not a colour", fix='use "#RRGGBB"'
            ) from exc
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise UserError(f"{path}: [variables] must be a table")
    data["variables"] = {str(k): str(v) for k, v in variables.items()}
    return Theme(**data)


def theme_files(folders: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            found.extend(sorted(folder.glob("*.toml")))
    return found


def load_themes(
    *, user_dir: Path | None = None, warn: Callable[[str], None] | None = None
) -> list[Theme]:
    """Shipped themes first, then user themes (a user theme may replace a shipped one by name)."""
    themes: dict[str, Theme] = {}
    for path in theme_files([shipped_theme_dir(), user_dir or user_theme_dir()]):
        try:
            theme = load_theme_file(path)
        except UserError as exc:
            if warn is not None:
                warn(exc.one_line())
            continue
        themes[theme.name] = theme
    return list(themes.values())


def settings_path() -> Path:
    """The app's own small settings file (the theme the user last picked)."""
    return locations.tui_settings_path()


def saved_theme() -> str | None:
    """The theme picked last time, if any; an unreadable file just means no choice was saved."""
    try:
        data = tomlkit.parse(settings_path().read_text(encoding="utf-8"))
    except (OSError, tomlkit.exceptions.ParseError):
        return None
    value = data.get("theme")
    return str(value) if value else None


def save_theme(name: str) -> None:
    """Remember the user's pick, keeping anything else (and any comments) in the file."""
    path = settings_path()
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except (OSError, tomlkit.exceptions.ParseError):
        doc = tomlkit.document()
    doc["theme"] = name
    atomic_write(path, tomlkit.dumps(doc))
