"""Pull the final answer out of a model's reply.

The rule, in order (the first that applies wins):

1. the last line that starts with ``Answer:``, ``Final answer:`` or ``The answer is`` (the text
   after the prefix);
2. the last ``\\boxed{X}``;
3. numeric answers (``kind="numeric"``, and ``"auto"`` when the reply holds a number): the last
   number in the reply;
4. text answers: the last non-empty line. A short one-line reply is its own last line, so
   ``pong`` answers ``pong``.

The answer is then cleaned: surrounding markdown (``**bold**``, ``*em*``, ``_em_``,
```code```), quotes and brackets are peeled off in pairs and surrounding punctuation
(``. , ; : ! ?``) is dropped. :func:`normalize` compares text case-insensitively with runs of
whitespace collapsed, and numbers by value.
"""

from __future__ import annotations

import math
import re

_ANSWER = re.compile(r"(?im)^\W*(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*[:=]?\s*(.+?)\s*$")
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")
_CODE_BLOCK = re.compile(r"```[ \t]*(?:python|py)?[^\n]*\n(.*?)```", re.S | re.I)
_PAIRS = (
    ("**", "**"), ("__", "__"), ("`", "`"), ("*", "*"), ("_", "_"), ('"', '"'), ("'", "'"),
    ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u00ab", "\u00bb"), ("(", ")"), ("[", "]"),
)  # fmt: skip
_PUNCT = " \t.,;:!?"


def extract_answer(text: str | None, *, kind: str = "auto") -> str | None:
    """The answer a reply commits to, or None.

    ``kind`` is ``numeric`` (never fall back to a line of text), ``text`` (never take a stray
    number: the last line is the answer) or ``auto`` (the last number if there is one, else the
    last line).
    """
    if not text or not text.strip():
        return None
    found = _ANSWER.findall(text)
    if found:
        return _clean(found[-1])
    boxed = _BOXED.findall(text)
    if boxed:
        return _clean(boxed[-1])
    if kind != "text":
        numbers = _NUMBER.findall(text)
        if numbers:
            return numbers[-1].replace(",", "")
        if kind == "numeric":
            return None
    last = [line for line in text.splitlines() if line.strip()][-1]
    return _clean(last)


def parse_number(text: str | None) -> float | None:
    """A number written the usual ways (``1,234``, ``$5``, ``12.5%``, ``3/4``), or None.

    Only finite numbers count: ``float()`` also reads the words "nan" and "inf", which are text
    answers (a text task answered "NaN" must be judged as text, not as a number never equal to
    itself).
    """
    if text is None:
        return None
    cleaned = text.strip().strip("$").replace(",", "").rstrip("%").strip()
    cleaned = cleaned.rstrip(".")
    try:
        value = float(cleaned)
    except ValueError:
        pass
    else:
        if math.isfinite(value):
            return value
    frac = re.fullmatch(r"([-+]?\d+)\s*/\s*(\d+)", cleaned)
    if frac and int(frac.group(2)) != 0:
        return int(frac.group(1)) / int(frac.group(2))
    numbers = _NUMBER.findall(cleaned)
    if len(numbers) == 1:
        return float(numbers[0].replace(",", ""))
    return None


def normalize(answer: str | None) -> str | None:
    """A key for comparing and voting: numbers by value, text by its lowercase words."""
    if answer is None:
        return None
    number = parse_number(answer)
    if number is not None:
        return repr(round(number, 9)).removesuffix(".0")
    text = " ".join(_strip_decoration(answer).lower().split())
    return text or None


def extract_code(text: str | None) -> str | None:
    """The last fenced Python block, or the whole reply when it has no fence."""
    if not text:
        return None
    blocks = _CODE_BLOCK.findall(text)
    if blocks:
        return blocks[-1]
    return text


def _clean(value: str) -> str:
    value = _strip_decoration(value)
    if value.startswith("*") != value.endswith("*"):  # "**Answer:** 42" leaves a stray "**"
        value = _strip_decoration(value.strip("*"))
    boxed = _BOXED.search(value)
    if boxed:
        value = _strip_decoration(boxed.group(1))
    return value


def _strip_decoration(value: str) -> str:
    """Peel matching markdown/quote/bracket pairs and surrounding punctuation, repeatedly."""
    while True:
        before = value
        value = value.strip(_PUNCT)
        for left, right in _PAIRS:
            if (
                len(value) > len(left) + len(right)
                and value.startswith(left)
                and value.endswith(right)
            ):
                value = value[len(left) : -len(right)]
                break
        if value == before:
            return value
