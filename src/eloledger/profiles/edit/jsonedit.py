"""Edit JSON by splicing text: change one key, keep every other byte (order, spacing, style).

Why not ``json.loads`` + ``json.dumps``: re-serialising rewrites the user's formatting
(inline arrays, spacing, unicode escapes), so a "changed only one key" diff becomes a diff of
the whole file. We parse once with a small position-recording scanner and replace, insert or
delete only the span of the member we own. ``allow_comments`` accepts ``//`` and ``/* */``
comments (Gemini CLI's settings.json allows them): they are blanked with spaces for parsing so
offsets stay identical, and the edit is applied to the original text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from eloledger.errors import UserError
from eloledger.fsutil import refuse_bom
from eloledger.jsonc import blank_comments
from eloledger.profiles.edit import DELETE, MISSING, KeyPath, get

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass
class Node:
    start: int
    end: int
    members: list[Member] | None = None  # for objects only


@dataclass
class Member:
    key: str
    key_start: int
    value: Node
    colon_text: str = field(default=": ")


def parse(text: str, path: Path | str, *, allow_comments: bool = False) -> Any:
    """The document as Python data; a UserError naming file, line and column if it is bad."""
    refuse_bom(text, Path(path))
    clean = blank_comments(text) if allow_comments else text
    if not clean.strip():
        return {}
    try:
        data = json.loads(clean)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}:{exc.lineno}: not valid JSON: {exc.msg} (line {exc.lineno}, column "
            f"{exc.colno}); nothing was written",
            fix="repair the file (or restore it from its backup) and try again",
        ) from None
    if not isinstance(data, dict):
        raise UserError(f"{path}:1: the top level must be a JSON object; nothing was written")
    return data


def apply(
    text: str, changes: dict[KeyPath, Any], path: Path | str, *, allow_comments: bool = False
) -> str:
    """Apply ``{keypath: value | DELETE}`` to ``text``, touching only those members."""
    for keypath, value in changes.items():
        text = _apply_one(text, keypath, value, path, allow_comments)
    return text


def _apply_one(text: str, keypath: KeyPath, value: Any, path: Path | str, comments: bool) -> str:
    while True:
        data = parse(text, path, allow_comments=comments)
        current = get(data, keypath)
        if value is DELETE:
            if current is MISSING:
                return text
        elif current is not MISSING and current == value and type(current) is type(value):
            return text
        if not text.strip():
            text = "{}\n" if not text else text.rstrip() + "{}\n"
            continue
        clean = blank_comments(text) if comments else text
        root = _Scanner(clean).document()
        obj, depth, member = root, 0, None
        for depth, key in enumerate(keypath):  # noqa: B007 - depth is used after the loop
            found = [m for m in obj.members or [] if m.key == key]
            if not found:
                break
            member = found[-1]  # JSON parsers keep the last duplicate
            if depth == len(keypath) - 1:
                break
            if member.value.members is None:
                dotted = ".".join(keypath[: depth + 1])
                raise UserError(
                    f"{path}: '{dotted}' is not an object, so eloledger cannot set "
                    f"'{'.'.join(keypath)}' in it; nothing was written",
                    fix=f"make '{dotted}' an object or remove it",
                )
            obj, member = member.value, None
        else:  # pragma: no cover - loop always breaks
            pass
        if member is not None and member.key == keypath[-1] and depth == len(keypath) - 1:
            if value is DELETE:
                return _delete_member(text, obj, member)
            return text[: member.value.start] + _dumps(value) + text[member.value.end :]
        if value is DELETE:
            return text
        missing_key = keypath[depth]
        new_value = value
        for key in reversed(keypath[depth + 1 :]):  # the whole missing branch at once, so it
            new_value = {key: new_value}  # takes one style (inline or block), not a mix
        text = _insert_member(text, clean, obj, missing_key, new_value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _indent_at(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    return text[start : start + len(text[start:pos]) - len(text[start:pos].lstrip(" \t"))]


def _indent_unit(clean: str) -> str:
    """The file's indentation step, read off the top-level object (two spaces if unseen)."""
    root = _Scanner(clean).document()
    if root.members and "\n" in clean[root.start : root.members[0].key_start]:
        outer = _indent_at(clean, root.start)
        inner = _indent_at(clean, root.members[0].key_start)
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer) :]
    return "  "


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _block(value: Any, indent: str, unit: str, nl: str) -> str:
    """``value`` laid out like the block around it: nested objects one member per line."""
    if not isinstance(value, dict) or not value:
        return _dumps(value)
    inner = indent + unit
    members = [f"{inner}{_dumps(k)}: {_block(v, inner, unit, nl)}" for k, v in value.items()]
    return "{" + nl + ("," + nl).join(members) + nl + indent + "}"


def _insert_member(text: str, clean: str, obj: Node, key: str, value: Any) -> str:
    nl = _newline(text)
    unit = _indent_unit(clean)
    members = obj.members or []
    if members:
        last = members[-1]
        colon = last.colon_text
        multiline = "\n" in clean[obj.start : members[0].key_start]
        if multiline:
            indent = _indent_at(clean, last.key_start)
            entry = _block(value, indent, unit, nl)
            insert = f",{nl}{indent}{_dumps(key)}{colon}{entry}"
        else:
            inline = json.dumps(value, ensure_ascii=False, separators=(", ", colon))
            insert = f", {_dumps(key)}{colon}{inline}"
        pos = last.value.end
        return text[:pos] + insert + text[pos:]
    # empty object: open it up in the file's style
    base = _indent_at(clean, obj.start)
    entry = _block(value, base + unit, unit, nl)
    inner = f"{nl}{base}{unit}{_dumps(key)}: {entry}{nl}{base}"
    close = obj.end - 1  # position of '}'
    return text[: obj.start + 1] + inner + text[close:]


def _delete_member(text: str, obj: Node, member: Member) -> str:
    members = obj.members or []
    index = members.index(member)
    if len(members) == 1:
        return text[: obj.start + 1] + text[obj.end - 1 :]
    if index == len(members) - 1:
        previous = members[index - 1]
        return text[: previous.value.end] + text[member.value.end :]
    following = members[index + 1]
    return text[: member.key_start] + text[following.key_start :]




class _Scanner:
    """Records where each value and member is; only ever run on text json.loads accepted."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def document(self) -> Node:
        return self.value(self._ws(0))

    def value(self, pos: int) -> Node:
        ch = self.text[pos]
        if ch == "{":
            return self.obj(pos)
        if ch == "[":
            return self.array(pos)
        if ch == '"':
            _, end = scanstring(self.text, pos + 1)
            return Node(pos, end)
        for literal in ("true", "false", "null"):
            if self.text.startswith(literal, pos):
                return Node(pos, pos + len(literal))
        match = _NUMBER.match(self.text, pos)
        if not match:
            raise ValueError(f"unexpected character at {pos}")
        return Node(pos, match.end())

    def obj(self, start: int) -> Node:
        members: list[Member] = []
        pos = self._ws(start + 1)
        if self.text[pos] == "}":
            return Node(start, pos + 1, members)
        while True:
            key, after_key = scanstring(self.text, pos + 1)
            colon_pos = self._ws(after_key)
            value_pos = self._ws(colon_pos + 1)
            value = self.value(value_pos)
            colon_text = self.text[after_key:value_pos]
            if "\n" in colon_text:
                colon_text = ": "
            members.append(Member(key, pos, value, colon_text))
            pos = self._ws(value.end)
            if self.text[pos] == "}":
                return Node(start, pos + 1, members)
            pos = self._ws(pos + 1)  # skip ','

    def array(self, start: int) -> Node:
        pos = self._ws(start + 1)
        if self.text[pos] == "]":
            return Node(start, pos + 1)
        while True:
            pos = self._ws(self.value(pos).end)
            if self.text[pos] == "]":
                return Node(start, pos + 1)
            pos = self._ws(pos + 1)
