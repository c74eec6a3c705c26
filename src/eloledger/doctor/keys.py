"""Checks on one key value (never shown): a placeholder left from a guide, or whitespace."""

from __future__ import annotations

import re

from eloledger.doctor.findings import Finding, make

_PLACEHOLDER = re.compile(
    r"^(<.*>|\$\{?\w+\}?|x{3,}|\.{3,}|\*{3,}|(sk-)?(your|my|insert|replace|enter|paste|put)"
    r"[-_ ]?.*(key|token|here)|.*(api[-_]?key|token)[-_ ]?here|changeme|change[-_]me|todo|"
    r"placeholder|dummy|example|test|none|null|sk-\.\.\.|sk-x+|sk-\*+)$",
    re.IGNORECASE,
)


def is_placeholder(key: str) -> bool:
    """True for the values setup guides tell people to replace (YOUR_API_KEY, <key>, sk-xxx)."""
    return bool(_PLACEHOLDER.match(key.strip()))


def key_findings(key: str | None, target: str, evidence: str, name: str) -> list[Finding]:
    """auth.placeholder_key / auth.key_whitespace for one key value (never shown)."""
    if not key:
        return []
    found = []
    if is_placeholder(key):
        found.append(
            make(
                "auth.placeholder_key",
                target,
                f"{name} holds a placeholder, not a key",
                evidence,
                f"set {name} to your real key",
            )
        )
    if key != key.strip() or re.search(r"\s", key):
        found.append(
            make(
                "auth.key_whitespace",
                target,
                f"{name} has whitespace or a newline in it (clients send it as is)",
                evidence,
                f"set {name} again without spaces or newlines, e.g. "
                f'export {name}="$(printf %s "${name}" | tr -d \'[:space:]\')"',
            )
        )
    return found
