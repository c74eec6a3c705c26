"""Rule judge: compare an extracted answer with the task's answer (numeric, exact or regex)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from eloledger.judges.extract import extract_answer, normalize, parse_number


@dataclass(frozen=True)
class Verdict:
    score: float  # 0..1
    passed: bool
    answer: str | None  # the extracted answer (None when the reply committed to nothing)
    detail: str | None = None  # why it failed, when there is more to say (tests judge)


def judge_rule(
    content: str | None,
    expected: str,
    *,
    mode: str = "auto",
    tolerance: float = 1e-6,
    pattern: str | None = None,
) -> Verdict:
    """Score one reply. ``auto`` is numeric when the expected answer is a number, else exact.

    A numeric check reads the reply's last number; an exact or regex check its last line (see
    :mod:`eloledger.judges.extract` for the rule and the normalisation).
    """
    if mode == "auto":
        mode = "numeric" if parse_number(expected) is not None else "exact"
    answer = extract_answer(content, kind="numeric" if mode == "numeric" else "text")
    return Verdict(*_check(answer, expected, mode, tolerance, pattern), answer=answer)


def _check(
    answer: str | None, expected: str, mode: str, tolerance: float, pattern: str | None
) -> tuple[float, bool]:
    if answer is None:
        return 0.0, False
    if mode == "numeric":
        got, want = parse_number(answer), parse_number(expected)
        ok = (
            got is not None
            and want is not None
            and math.isclose(got, want, rel_tol=tolerance, abs_tol=tolerance)
        )
    elif mode == "regex":
        regex = (pattern or "{answer}").replace("{answer}", re.escape(expected))
        ok = re.fullmatch(regex, answer.strip(), re.I) is not None
    else:
        ok = normalize(answer) == normalize(expected)
    return (1.0 if ok else 0.0), ok
