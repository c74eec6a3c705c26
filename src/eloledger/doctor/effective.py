"""The settings each client will actually use, and where each value comes from.

Each client has its own precedence (docs/observed/clients.md): Claude Code lets a settings file's
``env`` beat the shell (local > project > user > process env); Codex reads ``config.toml``
(and ``NAME.config.toml`` on top with ``--profile NAME``) and ignores ``OPENAI_BASE_URL`` for
a custom provider; Gemini CLI takes the process env first and the first ``.env`` found only
for variables not already set (even to the empty string), and in a folder it does not trust it
skips every ``.gemini/.env`` and takes only the key-like variables from a plain ``.env``
(``clientfacts.gemini_folder_trust``); the SDKs read the shell env.

:func:`effective_settings` is what the TUI shows; :func:`collect` also returns the parsed
documents and the files that did not parse, for the static checks.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError

from eloledger import clientfacts
from eloledger.doctor.findings import Finding, make
from eloledger.jsonc import blank_comments
from eloledger.redact import mask, register_secret

SECRET_NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    }
)
CLAUDE_VARS = (
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_API_KEY",
    *clientfacts.ANTHROPIC_MODEL_VARS,
)
GEMINI_VARS = ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GEMINI_MODEL")
OPENAI_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
ANTHROPIC_SDK_VARS = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Source:
    """One place a value can come from: a file (and line, key) or an environment variable."""

    label: str  # e.g. "~/.claude/settings.json:4 env.ANTHROPIC_BASE_URL" or "$OPENAI_BASE_URL"
    value: str | None  # masked when the setting is a secret
    path: Path | None = None
    line: int | None = None

    def __str__(self) -> str:
        return self.label


@dataclass
class Setting:
    """The value a client uses, its source, and the sources it overrides (shadows)."""

    name: str
    value: str | None  # masked when ``secret``: safe to display
    source: Source
    shadowed: list[Source] = field(default_factory=list)
    secret: bool = False
    raw: str | None = field(default=None, repr=False)  # unmasked, for checks only: never display


@dataclass
class Effective:
    settings: dict[str, list[Setting]] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)  # files that did not parse
    codex_docs: dict[Path, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = field(default_factory=Path.cwd)
    gemini_trust: clientfacts.GeminiTrust | None = None  # whether Gemini CLI trusts ``cwd``

    def get(self, client: str, name: str) -> Setting | None:
        for setting in self.settings.get(client, []):
            if setting.name == name:
                return setting
        return None


def effective_settings(
    env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> dict[str, list[Setting]]:
    """Per client ("claude-code", "codex", "codex@NAME", "gemini-cli", "openai", "anthropic")."""
    return collect(env, cwd).settings


def collect(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Effective:
    env = dict(os.environ if env is None else env)
    cwd = Path.cwd() if cwd is None else Path(cwd)
    eff = Effective(env=env, cwd=cwd)
    _claude(eff)
    _codex(eff)
    _gemini(eff)
    eff.settings["openai"] = _from_env(
        env, OPENAI_VARS, defaults={"OPENAI_BASE_URL": DEFAULT_OPENAI_BASE}
    )
    eff.settings["anthropic"] = _from_env(env, ANTHROPIC_SDK_VARS)
    return eff


# --- Claude Code ----------------------------------------------------------------------------


def _claude(eff: Effective) -> None:
    scopes = clientfacts.claude_settings_paths(eff.env, eff.cwd)
    layers: list[tuple[str, Path, str, dict[str, Any]]] = []  # highest precedence first
    for scope in ("local", "project", "user"):
        path = scopes[scope]
        loaded = _read_json(path, eff)
        if loaded is not None:
            layers.append((scope, path, *loaded))
    settings: list[Setting] = []
    for name in CLAUDE_VARS:
        candidates: list[tuple[Source, str]] = []
        for scope, path, text, doc in layers:
            block = doc.get("env")
            if isinstance(block, dict) and name in block:
                raw = "" if block[name] is None else str(block[name])
                line = _line_of(text, f'"{name}"')
                note = " (project env: trusted workspaces only)" if scope == "project" else ""
                candidates.append((_file_source(path, line, f"env.{name}{note}", name, raw), raw))
        if name in eff.env:
            raw = eff.env[name]
            candidates.append((_env_source(name, raw), raw))
        if candidates:
            settings.append(_setting(name, candidates))
    for key in ("model", "apiKeyHelper"):
        for _scope, path, text, doc in layers:
            if isinstance(doc.get(key), str):
                raw = doc[key]
                settings.append(
                    _setting(
                        key, [(_file_source(path, _line_of(text, f'"{key}"'), key, key, raw), raw)]
                    )
                )
                break
    eff.settings["claude-code"] = settings


# --- Codex CLI ------------------------------------------------------------------------------


def _codex(eff: Effective) -> None:
    home = clientfacts.codex_home(eff.env)
    base_path = home / "config.toml"
    base = _read_toml(base_path, eff)
    if base is not None:
        eff.codex_docs[base_path] = base
    eff.settings["codex"] = _codex_settings(eff, [(base_path, base)] if base else [])
    for path in sorted(home.glob("*.config.toml")) if home.is_dir() else []:
        doc = _read_toml(path, eff)
        if doc is None:
            continue
        eff.codex_docs[path] = doc
        layers = [(path, doc)] + ([(base_path, base)] if base else [])
        name = path.name[: -len(".config.toml")]
        eff.settings[f"codex@{name}"] = _codex_settings(eff, layers)


def _codex_settings(
    eff: Effective, layers: list[tuple[Path, tuple[str, dict[str, Any]]]]
) -> list[Setting]:
    """Settings for one Codex invocation; ``layers`` highest precedence first."""

    def lookup(*keys: str) -> list[tuple[Source, str]]:
        found = []
        for path, (text, doc) in layers:
            node: Any = doc
            for k in keys:
                node = node.get(k) if isinstance(node, dict) else None
            if node is not None and not isinstance(node, dict):
                line = _toml_line(text, keys)
                label_key = ".".join(keys)
                found.append((_file_source(path, line, label_key, keys[-1], str(node)), str(node)))
        return found

    settings: list[Setting] = []
    provider_found = lookup("model_provider")
    provider = provider_found[0][1] if provider_found else "openai"
    settings.append(
        _setting(
            "model_provider", provider_found or [(Source("built-in default", "openai"), "openai")]
        )
    )
    model = lookup("model")
    if model:
        settings.append(_setting("model", model))
    custom = provider not in clientfacts.CODEX_BUILTIN_PROVIDERS
    if custom:
        for field_name in ("base_url", "wire_api", "env_key"):
            found = lookup("model_providers", provider, field_name)
            if found:
                setting = _setting(field_name, found)
                if field_name == "base_url" and eff.env.get("OPENAI_BASE_URL"):
                    value = eff.env["OPENAI_BASE_URL"]
                    setting.shadowed.append(
                        Source("$OPENAI_BASE_URL (ignored by a custom provider)", value)
                    )
                settings.append(setting)
        env_key = next((v for _s, v in lookup("model_providers", provider, "env_key")), None)
        if env_key:
            raw = eff.env.get(env_key)
            settings.append(
                _setting(
                    "key",
                    [(_env_source(env_key, raw or ""), raw or "")]
                    if env_key in eff.env
                    else [(Source(f"${env_key} (unset)", None), "")],
                    secret=True,
                )
            )
    elif provider == "openai":
        value = eff.env.get("OPENAI_BASE_URL")
        if value is not None:
            settings.append(_setting("base_url", [(_env_source("OPENAI_BASE_URL", value), value)]))
        else:
            settings.append(
                _setting(
                    "base_url",
                    [(Source("built-in default", DEFAULT_OPENAI_BASE), DEFAULT_OPENAI_BASE)],
                )
            )
        if "OPENAI_API_KEY" in eff.env:
            raw = eff.env["OPENAI_API_KEY"]
            settings.append(
                _setting("key", [(_env_source("OPENAI_API_KEY", raw), raw)], secret=True)
            )
    return settings


# --- Gemini CLI -----------------------------------------------------------------------------


UNTRUSTED_NOTE = "not read: folder not trusted"
_UNSAFE_IN_UNTRUSTED = re.compile(r"[^A-Za-z0-9\-_./]")


def _gemini(eff: Effective) -> None:
    """Process env first, then the first .env found; in an untrusted folder Gemini CLI skips
    every ``.gemini/.env`` and takes only the whitelisted variables from a plain ``.env``."""
    trust = clientfacts.gemini_folder_trust(eff.env, eff.cwd)
    eff.gemini_trust = trust
    if trust.error:
        where = tilde(clientfacts.gemini_trusted_folders_path(eff.env))
        eff.problems.append(
            make(
                "config.unreadable",
                where,
                f"{where} is broken: Gemini CLI refuses to start",
                trust.error,
                "fix the file: a JSON object mapping folders to TRUST_FOLDER, TRUST_PARENT or "
                "DO_NOT_TRUST",
            )
        )
    trusted = trust.trusted is not False
    readable = set(clientfacts.gemini_env_candidates(eff.env, eff.cwd, trusted=trusted))
    parsed = [
        (p, *_read_dotenv(p))
        for p in clientfacts.gemini_env_candidates(eff.env, eff.cwd)
        if p.is_file()
    ]
    first = next((p for p, _v, _l in parsed if p in readable), None)
    settings: list[Setting] = []
    for name in GEMINI_VARS:
        read: list[tuple[Source, str]] = []  # what Gemini CLI reads, in precedence order
        not_read: list[tuple[Source, str]] = []
        if name in eff.env:
            read.append((_env_source(name, eff.env[name]), eff.env[name]))
        for path, values, lines in parsed:
            if name not in values:
                continue
            value, note = values[name], ""
            if path not in readable:
                note = f" ({UNTRUSTED_NOTE})"
            elif path != first:
                note = " (not read: an earlier .env was found first)"
            elif not trusted and name not in clientfacts.GEMINI_UNTRUSTED_ENV_WHITELIST:
                note = f" ({UNTRUSTED_NOTE}: from a .env only {_whitelist()})"
            elif not trusted:
                if name in SECRET_NAMES:
                    register_secret(value)
                value = _UNSAFE_IN_UNTRUSTED.sub("", value)  # as Gemini CLI sanitizes it
            entry = (_file_source(path, lines[name], name + note, name, value), value)
            (not_read if note else read).append(entry)
        if read:
            settings.append(_setting(name, read + not_read))
        elif not_read:
            # Only in files Gemini CLI does not read: the variable stays unset.
            shown = _setting(name, not_read)
            unset = Source(f"${name} (unset)", None)
            settings.append(
                Setting(name, None, unset, [shown.source, *shown.shadowed], shown.secret, None)
            )
    gem_settings = clientfacts.gemini_dir(eff.env) / "settings.json"
    loaded = _read_json(gem_settings, eff, comments=True)
    if loaded is not None:
        text, doc = loaded
        selected = (
            ((doc.get("security") or {}).get("auth") or {}).get("selectedType")
            if isinstance(doc.get("security"), dict)
            else None
        )
        if selected is not None:
            settings.append(
                _setting(
                    "security.auth.selectedType",
                    [
                        (
                            _file_source(
                                gem_settings,
                                _line_of(text, '"selectedType"'),
                                "security.auth.selectedType",
                                "selectedType",
                                str(selected),
                            ),
                            str(selected),
                        )
                    ],
                )
            )
    eff.settings["gemini-cli"] = settings


def _whitelist() -> str:
    return ", ".join(sorted(clientfacts.GEMINI_UNTRUSTED_ENV_WHITELIST))


# --- shared helpers -------------------------------------------------------------------------


def _from_env(
    env: Mapping[str, str], names: tuple[str, ...], defaults: Mapping[str, str] | None = None
) -> list[Setting]:
    settings = []
    for name in names:
        if name in env:
            settings.append(_setting(name, [(_env_source(name, env[name]), env[name])]))
        elif defaults and name in defaults:
            settings.append(
                _setting(name, [(Source("built-in default", defaults[name]), defaults[name])])
            )
    return settings


def _setting(
    name: str, candidates: list[tuple[Source, str]], secret: bool | None = None
) -> Setting:
    """The first candidate wins; the rest are what it shadows."""
    secret = name in SECRET_NAMES if secret is None else secret
    if secret:
        for _source, value in candidates:
            register_secret(value)
        candidates = [(replace(s, value=_shown(v, True)), v) for s, v in candidates]
    source, raw = candidates[0]
    return Setting(name, _shown(raw, secret), source, [s for s, _v in candidates[1:]], secret, raw)


def _shown(raw: str | None, secret: bool) -> str | None:
    if raw is None:
        return None
    return mask(raw) if secret and raw else raw


def _env_source(name: str, raw: str | None) -> Source:
    return Source(f"${name} (process env)", _shown(raw, name in SECRET_NAMES))


def _file_source(path: Path, line: int | None, key: str, name: str, raw: str | None) -> Source:
    where = f"{tilde(path)}:{line}" if line else tilde(path)
    return Source(f"{where} {key}", _shown(raw, name in SECRET_NAMES), path, line)


def tilde(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home and text.startswith(home + os.sep) else text


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1


def _toml_line(text: str, keys: tuple[str, ...]) -> int | None:
    """Line of ``keys[-1] =`` inside the table named by ``keys[:-1]`` (best effort)."""
    lines = text.splitlines()
    table = ".".join(keys[:-1])
    in_table = not table
    key_re = re.compile(rf'^\s*("?){re.escape(keys[-1])}\1\s*=')
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            name = stripped.strip("[]").strip().replace('"', "")
            in_table = name == table
            continue
        if in_table and key_re.match(line):
            return number
    return None


def _read_json(
    path: Path, eff: Effective, *, comments: bool = False
) -> tuple[str, dict[str, Any]] | None:
    """``comments``: the client accepts // and /* */ comments (Gemini CLI's settings.json)."""
    text = _read_config(path, eff)
    if text is None:
        return None
    try:
        clean = blank_comments(text) if comments else text
        doc = json.loads(clean) if clean.strip() else {}
    except json.JSONDecodeError as exc:
        effect = "the client ignores or rejects the whole file"
        _unparsable(path, eff, "JSON", f": {exc.msg}", (exc.lineno, exc.colno), effect)
        return None
    return (text, doc) if isinstance(doc, dict) else None


def _read_toml(path: Path, eff: Effective) -> tuple[str, dict[str, Any]] | None:
    text = _read_config(path, eff)
    if text is None:
        return None
    try:
        doc = tomlkit.parse(text).unwrap()
    except ParseError as exc:
        _unparsable(path, eff, "TOML", "", (exc.line, exc.col), "Codex refuses to start")
        return None
    return text, doc


def _read_config(path: Path, eff: Effective) -> str | None:
    """The file's text; None when it is absent, or unreadable (then a finding says why)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as exc:
        eff.problems.append(
            make(
                "config.unreadable",
                str(path),
                f"{path} is not UTF-8 text ({exc.reason}); the client cannot read it",
                str(path),
                "save it as UTF-8",
            )
        )
        return None
    except OSError as exc:
        eff.problems.append(
            make(
                "config.unreadable",
                str(path),
                f"cannot read {path}: {exc}",
                str(path),
                "check the file's permissions",
            )
        )
        return None
    if text.startswith("\ufeff"):
        eff.problems.append(
            make(
                "config.unreadable",
                tilde(path),
                f"{tilde(path)} starts with a UTF-8 BOM; the client fails to parse it",
                f"{tilde(path)}:1:1",
                "save it without BOM (UTF-8 without signature)",
            )
        )
        return None
    return text


def _unparsable(
    path: Path, eff: Effective, fmt: str, detail: str, where: tuple[int, int], effect: str
) -> None:
    """A config.unreadable finding pointing at the line and column the parser stopped at."""
    shown = tilde(path)
    eff.problems.append(
        make(
            "config.unreadable",
            shown,
            f"{shown} does not parse as {fmt}{detail}",
            f"{shown}:{where[0]}:{where[1]}",
            f"fix the {fmt} syntax at that line; {effect}",
        )
    )


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


def _read_dotenv(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    """KEY=value pairs of a .env file (quotes, export and comments handled) and their lines."""
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    try:
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
    except (OSError, UnicodeDecodeError):
        return values, lines
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _DOTENV_LINE.match(line)
        if not match:
            continue
        name, value = match.group(1), match.group(2).strip()
        if value[:1] in ('"', "'") and value[0] in value[1:]:
            value = value[1 : value.index(value[0], 1)]
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        values[name] = value
        lines[name] = number
    return values, lines
