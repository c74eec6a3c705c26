"""Edit a dotenv file line by line: change our variables, keep comments, order and the rest.

Gemini CLI reads ``~/.gemini/.env`` with the ``dotenv`` rules: ``KEY=value`` or
``export KEY=value``, quoted values, ``#`` comments (inline after an unquoted value).
The last definition of a variable wins, so we rewrite every definition of a variable we own
(keeping each line's ``export`` prefix and inline comment) and append new ones at the end.
"""

from __future__ import annotations

import re
from pathlib import Path

from eloledger.errors import UserError
from eloledger.fsutil import refuse_bom
from eloledger.profiles.edit import DELETE

_LINE = re.compile(
    r"^(?P<lead>\s*(?:export\s+)?)(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)(?P<eq>\s*=\s*)(?P<rest>.*)$"
)


def _split_value(rest: str) -> tuple[str, str]:
    """(raw value, trailing text such as an inline comment) of the text after ``=``."""
    if rest[:1] in ("'", '"', "`"):
        quote = rest[0]
        i = 1
        while i < len(rest):
            if rest[i] == "\\" and quote == '"':
                i += 2
                continue
            if rest[i] == quote:
                return rest[: i + 1], rest[i + 1 :]
            i += 1
        return rest, ""  # unterminated (multi-line values): treat the line as the value
    match = re.search(r"\s+#", rest)
    if match:
        return rest[: match.start()], rest[match.start() :]
    return rest, ""


def _unquote(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in ("'", '"', "`"):
        inner = raw[1:-1]
        if raw[0] == '"':
            inner = inner.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        return inner
    return raw


def quote(value: str) -> str:
    """A value as dotenv reads it back unchanged (bare when that is safe)."""
    if re.fullmatch(r"[A-Za-z0-9_./:@%+,=-]*", value) and value:
        return value
    if "'" not in value and "\n" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _lines(text: str) -> list[str]:
    """Lines as dotenv splits them: at ``\n`` only (``str.splitlines`` would also split at
    ``\r``, ``\x0b``, ``\x85`` or U+2028 inside a value, and then one variable reads as two)."""
    return [part for part in re.split(r"(?<=\n)", text) if part]


def parse(text: str, path: Path | str) -> dict[str, str]:
    """Variables defined in the file (last definition wins)."""
    refuse_bom(text, Path(path))
    result: dict[str, str] = {}
    for number, raw in enumerate(_lines(text), 1):
        line = raw[:-2] if raw.endswith("\r\n") else raw.rstrip("\n")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            if "\x00" in line:
                raise UserError(f"{path}:{number}: binary data in a .env file; nothing written")
            continue  # dotenv ignores lines it does not understand; so do we
        raw, _ = _split_value(match.group("rest"))
        result[match.group("key")] = _unquote(raw)
    return result


def apply(text: str, changes: dict[str, str | object], path: Path | str) -> str:
    """Apply ``{VAR: value | DELETE}``; every other line stays byte for byte."""
    current = parse(text, path)
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = _lines(text)
    out: list[str] = []
    for line in lines:
        body = line[:-2] if line.endswith("\r\n") else line.rstrip("\n")
        ending = line[len(body) :]
        match = _LINE.match(body) if not body.lstrip().startswith("#") else None
        key = match.group("key") if match else None
        if key is None or key not in changes:
            out.append(line)
            continue
        value = changes[key]
        if value is DELETE:
            continue
        if current.get(key) == value and _unquote(_split_value(match.group("rest"))[0]) == value:
            out.append(line)
            continue
        _, trailing = _split_value(match.group("rest"))
        out.append(f"{match.group('lead')}{key}{match.group('eq')}{quote(str(value))}{trailing}")
        out.append(ending)
    result = "".join(out)
    missing = [k for k, v in changes.items() if v is not DELETE and k not in current]
    if missing:
        if result and not result.endswith(("\n", "\r")):
            result += nl
        for key in missing:
            result += f"{key}={quote(str(changes[key]))}{nl}"
    return result
