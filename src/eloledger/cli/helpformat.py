"""``--help`` text that fits the terminal and breaks only between words.

argparse's ``RawDescriptionHelpFormatter`` keeps a description or epilog as written, so a long
line was wrapped by the terminal inside a word ("ser / ver"); its option help breaks at hyphens
and inside long words (a flag or a URL cut in two). This formatter keeps the written layout
(examples, tables of modes) and wraps only the lines longer than the terminal, between words,
under their own indent.
"""

from __future__ import annotations

import argparse
import re

_LEAD = re.compile(r"^\s*")


class WrappedHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Raw description/epilog layout, lines wrapped between words to the terminal's width."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        from eloledger.tables import fill  # only when help is printed: not on every command's start

        lines = []
        for line in text.splitlines():
            if len(indent) + len(line) <= len(indent) + width or not line.strip():
                lines.append(indent + line)
                continue
            lead = indent + _LEAD.match(line).group(0)
            lines.append(fill(line.strip(), len(indent) + width, lead, lead))
        return "\n".join(lines) + ("\n" if text.endswith("\n") else "")

    def _split_lines(self, text: str, width: int) -> list[str]:
        from eloledger.tables import fill

        return fill(" ".join(text.split()), width).splitlines()
