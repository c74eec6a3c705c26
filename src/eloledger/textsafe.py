"""Text from files (ledgers, agent logs, configs) made safe to show, and refused where it is
written.

Why: a name read from a file a user did not write (a colleague's ledger, an imported Claude log
whose ``cwd`` holds ``ESC ] 0 ; title BEL``) must never reach a terminal as a control
sequence, and a model name with ``\\r`` or U+2028 must never reach a client's config file, where
a line-based reader would split it. :func:`visible` is for display (tables, the TUI, error
messages): every control character becomes a visible ASCII escape, one cell per character, so
columns stay aligned. :func:`refuse_control` is for input that eloledger writes on. JSON output
keeps the exact text (json escapes control characters itself).

What counts: C0 (U+0000-U+001F, tab and newline included), DEL, C1 (U+0080-U+009F, which
includes the 8-bit CSI U+009B and NEL U+0085), the line and paragraph separators
U+2028/U+2029, and the invisible format characters that reorder or hide text (bidi embeddings,
overrides and isolates, zero-width spaces and joiners, the BOM).
"""

from __future__ import annotations

import re

from eloledger.errors import UserError

_UNSAFE = (
    "\x00-\x1f\x7f-\x9f"
    "\u200b-\u200f"  # zero-width space/joiners, LRM/RLM
    "\u2028\u2029"  # line / paragraph separator
    "\u202a-\u202e"  # bidi embeddings and overrides
    "\u2060-\u2069"  # word joiner, invisible operators, bidi isolates
    "\ufeff"  # BOM / zero-width no-break space
)
UNSAFE_RE = re.compile(f"[{_UNSAFE}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\x1b": "\\e"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control or invisible format character as a visible escape."""
    if not UNSAFE_RE.search(text):
        return text
    return UNSAFE_RE.sub(_escape, text)


def first_control(text: str) -> str | None:
    """The first character :func:`visible` would escape, or None."""
    match = UNSAFE_RE.search(text)
    return match.group() if match else None


def refuse_control(value: str, where: str, fix: str = "") -> None:
    """A one-line UserError when ``value`` holds a control character (named, shown escaped)."""
    ch = first_control(value)
    if ch is None:
        return
    raise UserError(
        f"{where}: {visible(value)!r} contains the control character U+{ord(ch):04X} "
        f"({visible(ch)}); it would split or rewrite lines in the files and terminals it "
        "reaches",
        fix=fix or "remove it (names and free text are one line of printable characters)",
    )
