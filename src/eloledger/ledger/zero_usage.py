"""Ok calls whose usage says zero, found in ledger files for ``elo --ledger``'s warning.

Why: a gateway that drops usage (claude-code-router on streams, a relay) leaves rows that say
0 tokens; summed as they are, they make an arm look free. ``tokens``, the TUI and ``doctor
--ledger`` count them as missing usage (:func:`eloledger.ledger.summary.counted_usage`); the Elo
table's token columns come from another reader, so this says how many there are and where the
first one is. Only the lines that hold a zero count are parsed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eloledger.ledger.linegrep import SAMPLE_ROLES, scan_lines

_NEEDLES = tuple(
    f'"{name}":{space}0{end}'.encode()
    for name in ("total_tokens", "prompt_tokens")
    for space in ("", " ")
    for end in (",", "}")
)


def zero_usage_warnings(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """One warning naming how many ok sample calls say zero tokens, and the first one."""
    found: list[str] = []

    def take(row: dict[str, Any], where: str) -> None:
        if row.get("role") not in SAMPLE_ROLES or row.get("status", "ok") != "ok":
            return
        if row.get("usage_source") in ("estimated", "missing"):
            return
        if row.get("total_tokens") == 0 or row.get("prompt_tokens") == 0:
            found.append(where)

    try:
        for path in paths:
            scan_lines(Path(path), _NEEDLES, take)
    except OSError:
        return []  # the reader that reads the files names the problem
    if not found:
        return []
    return [
        f"{len(found)} ok call(s) report zero token usage, first at {found[0]}: that is usage "
        "the gateway did not pass on, not a free call; the table counts them as missing usage "
        "(run 'eloledger doctor --ledger' to see which gateway drops usage)"
    ]
