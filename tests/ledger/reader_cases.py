"""The four inputs on which eloledger's ledger readers once disagreed, as one text each: a
last line without its newline, a UTF-8 BOM, ``NaN`` in a row, and the alias ``task``. Every
reader (the main one, resume's, the doctor's, the verdict count) is tested on these."""

from __future__ import annotations

CASES = ["last line without newline", "BOM", "NaN", "alias task"]


def as_case(text: str, case: str) -> bytes:
    """``text`` (JSON lines, each ending in a newline) turned into ``case``."""
    if case == "last line without newline":
        text = text.rstrip("\n")
    elif case == "BOM":
        text = "\ufeff" + text
    elif case == "NaN":
        text = text.replace("}\n", ', "latency_ms": NaN}\n', 1)
    elif case == "alias task":
        text = text.replace('"task_id"', '"task"')
    return text.encode("utf-8")
