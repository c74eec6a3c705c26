"""``--help`` text that fits the terminal and breaks only between words.

argparse's ``RawDescriptionHelpFormatter`` keeps a description or epilog as written, so a long
line was wrapped by the terminal inside a word ("ser / ver"); its option help breaks at hyphens
and inside long words (a flag or a URL cut in two). This formatter keeps the written layout
(examples, tables of modes, a sentence put on a line of its own) and fills the prose again.
The descriptions are written wrapped at the source's width, so re-wrapping each line alone at
80 columns left a stub after every line ("project, source or" / "run (run_id), ...").
"""

from __future__ import annotations

import argparse
import re

_GAP = re.compile(r"\S( {2,})\S")  # an aligned column: a comment after an example, a mode's text
_SENTENCE_END = (".", ":", "?", "!")


class WrappedHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Raw description/epilog layout, prose filled again to the terminal's width."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = text.splitlines()
        if all(len(line) <= width for line in lines):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        filled = [_fill_block(block, width, indent) for block in paragraphs(lines)]
        return "\n".join(filled) + ("\n" if text.endswith("\n") else "")

    def _split_lines(self, text: str, width: int) -> list[str]:
        from eloledger.tables import fill

        return fill(" ".join(text.split()), width).splitlines()


def paragraphs(lines: list[str]) -> list[list[str]]:
    """The lines grouped as written: a line goes on the paragraph before when the break
    between them is a wrap, not the author's (:func:`_continues`)."""
    widths = _section_widths(lines)
    blocks: list[list[str]] = []
    for at, (line, width) in enumerate(zip(lines, widths, strict=True)):
        block = blocks[-1] if blocks else []
        after = lines[at + 1] if at + 1 < len(lines) else ""
        heading = line.rstrip().endswith(":") and after[:1].isspace()  # "examples:" and its lines
        if (
            block
            and block[-1].strip()
            and line.strip()
            and not heading
            and _continues(block, line, width)
        ):
            block.append(line)
        else:
            blocks.append([line])
    return blocks


def _section_widths(lines: list[str]) -> list[int]:
    """Each line's source width: the longest line of its run of lines at its indent (the
    author wrapped each section at its own width)."""
    widths = [0] * len(lines)
    start = 0
    for end in range(1, len(lines) + 1):
        if end == len(lines) or _lead(lines[end]) != _lead(lines[start]) or not lines[end].strip():
            longest = max(len(line) for line in lines[start:end])
            widths[start:end] = [longest] * (end - start)
            start = end
    return widths


def _continues(block: list[str], line: str, source_width: int) -> bool:
    """Whether ``line`` goes on ``block``'s paragraph. Never a line with an aligned column (a
    table row, an example and its comment), nor after a line that ends with ":" (a heading).
    A line at the paragraph's hanging column goes on (a table cell's second line); prose at the
    same indent goes on when its first word did not fit on the line before at the source's
    width, or, unindented, when the line before does not end a sentence. Examples stand alone:
    an indented line that starts as the one before did ("eloledger ...") is a new one."""
    before = block[-1]
    if _GAP.search(line) or before.rstrip().endswith(":"):
        return False
    lead, first_lead = len(_lead(line)), len(_lead(block[0]))
    if lead > first_lead:
        return lead == _hang_column(block, line)
    if lead < first_lead or (len(block) > 1 and lead != len(_lead(block[1]))):
        return False
    if _GAP.search(block[0]) and block[0][:1].isspace():
        return False
    wrapped = len(before) + 1 + len(line.split(maxsplit=1)[0]) > source_width
    if lead:
        return wrapped and line.split(maxsplit=1)[0] != before.split(maxsplit=1)[0]
    return wrapped or not before.rstrip().endswith(_SENTENCE_END)


def _hang_column(block: list[str], line: str) -> int:
    """Where the paragraph's wrapped lines start: after an aligned column, else under its
    second line (a hanging indent), else under ``line``."""
    gaps = _gap_columns(block[0])
    if gaps and block[0][:1].isspace():
        return gaps[-1]
    return len(_lead(block[1] if len(block) > 1 else line))


def _gap_columns(line: str) -> list[int]:
    return [m.end(1) for m in _GAP.finditer(line)]


def _fill_block(block: list[str], width: int, indent: str) -> str:
    from eloledger.tables import fill  # only when help is printed: not on every command's start

    head = block[0]
    if len(block) == 1 and len(head) <= width:
        return indent + head if head.strip() else head
    lead = indent + _lead(head)
    gaps = [c for c in _gap_columns(head) if c <= width - 16] if head[:1].isspace() else []
    gaps = [c for c in gaps if c + len(head[c:].split(maxsplit=1)[0]) <= width] or gaps[:1]
    if gaps:  # an example and its comment, a mode and its text: wrapped in that column
        column = gaps[-1]
        rest = " ".join(" ".join([head[column:], *block[1:]]).split())
        return fill(rest, len(indent) + width, indent + head[:column], indent + " " * column)
    words = " ".join(" ".join(block).split())
    if len(block) > 1:
        return fill(words, len(indent) + width, lead, indent + _lead(block[1]))
    hang = lead + "  " if head[:1].isspace() else lead  # a wrapped example reads as one
    return fill(words, len(indent) + width, lead, hang)


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
