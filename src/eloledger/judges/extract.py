"""Pull the final answer out of a model's reply: ``Answer: X``, ``\\boxed{X}``, or the last number."""

from __future__ import annotations

import re

_ANSWER = re.compile(r"(?im)^\W*(?:final\s+)?answer\s*(?:is)?\s*[:=]?\s*(.+?)\s*$")
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")
_CODE_BLOCK = re.compile(r"```[ \t]*(?:python|py)?[^\n]*\n(.*?)```", re.S | re.I)


def extract_answer(text: str | None) -> str | None:
    """The answer a reply commits to (the last ``Answer:`` line wins), or None."""
    if not text:
        return None
    found = _ANSWER.findall(text)
    if found:
        return _clean(found[-1])
    boxed = _BOXED.findall(text)
    if boxed:
        return _clean(boxed[-1])
    numbers = _NUMBER.findall(text)
    if numbers:
        return numbers[-1].replace(",", "")
    return None


def parse_number(text: str | None) -> float | None:
    """A number written the usual ways (``1,234``, ``$5``, ``12.5%``, ``3/4``), or None."""
    if text is None:
        return None
    cleaned = text.strip().strip("$").replace(",", "").rstrip("%").strip()
    cleaned = cleaned.rstrip(".")
    try:
        return float(cleaned)
    except ValueError:
        pass
    frac = re.fullmatch(r"([-+]?\d+)\s*/\s*(\d+)", cleaned)
    if frac and int(frac.group(2)) != 0:
        return int(frac.group(1)) / int(frac.group(2))
    numbers = _NUMBER.findall(cleaned)
    if len(numbers) == 1:
        return float(numbers[0].replace(",", ""))
    return None


def normalize(answer: str | None) -> str | None:
    """A key for voting: numbers compare by value, text by its lowercase words."""
    if answer is None:
        return None
    number = parse_number(answer)
    if number is not None:
        return repr(round(number, 9)).removesuffix(".0")
    text = " ".join(answer.lower().split()).strip(".")
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
    value = value.strip().strip("*").strip()
    boxed = _BOXED.search(value)
    if boxed:
        value = boxed.group(1)
    return value.strip().rstrip(".").strip()
