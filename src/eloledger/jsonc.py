"""JSON with comments, as Gemini CLI and VS Code-style settings files allow them.

A low module on its own so the client facts, the profile editors and the doctor read such files
the same way without importing each other.
"""

from __future__ import annotations


def blank_comments(text: str) -> str:
    """Replace // and /* */ comments (outside strings) by spaces, keeping every offset."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            for j in range(i, end):
                out[j] = " "
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] not in "\r\n":
                    out[j] = " "
            i = end
        else:
            i += 1
    return "".join(out)
