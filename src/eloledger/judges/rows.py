"""The shape of an LLM judge's ledger rows, written by the runner and read back everywhere.

A judge call is nobody's arm: the guides sum tokens per arm with one-liners such as
``jq -r '[.arm, .total_tokens] | @tsv' L | awk '{s[$1]+=$2} ...'``, which read only ``arm``.
So a judge row carries ``arm = "judge"`` (one honest line, the judge's cost) and names what it
compared in ``judged``: ``"baseline vs cot"`` for a match between two arms, the arm's name for
a knockout between that arm's own samples. Ledgers written before this put that label in
``arm``; :func:`judge_label` reads both. A match between two arms also says, in the guides'
words, which arm the call preferred: ``winner`` and ``opponent`` (left out on a tie or a
reply without a verdict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JUDGE_ARM = "judge"
PAIR_SEP = " vs "


def judge_fields(task_id: str, label: str, session: int, match: int, order: int) -> dict[str, Any]:
    """The identity fields of one judge call (``round`` = the order the answers were shown)."""
    return {
        "task_id": task_id,
        "arm": JUDGE_ARM,
        "judged": label,
        "session": session,
        "sample": match,
        "round": order,
        "role": "judge",
    }


def judge_label(row: Mapping[str, Any]) -> str:
    """What a judge row compared: ``judged``, else (an older ledger) its ``arm``."""
    label = row.get("judged")
    return str(label if label is not None else row.get("arm"))


def pair_arms(label: str) -> list[str]:
    """The arm names in a label: two for a match between arms, one for a knockout."""
    return label.split(PAIR_SEP)


def verdict_fields(pair: tuple[str, str] | None, order: int, verdict: float | None) -> dict[str, str]:
    """``{"winner", "opponent"}`` of one judge call between the arms ``pair`` (``order`` 0
    showed the first as A); empty for a knockout (no pair), a tie or no verdict."""
    if pair is None or verdict is None or verdict == 0.5:
        return {}
    shown_a, shown_b = pair if order == 0 else pair[::-1]
    winner, opponent = (shown_a, shown_b) if verdict == 1.0 else (shown_b, shown_a)
    return {"winner": winner, "opponent": opponent}
