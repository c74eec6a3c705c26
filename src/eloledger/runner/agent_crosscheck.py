"""Cross-check a session's final report against the session log its CLI wrote.

The log readers are the importer's (``eloledger.agents.<cli>.logs`` with the shared
deduplicating scanner), so the two sources are read by independent code. When the readers are
not installed the check says ``unchecked`` rather than pretending to agree.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.agents.usage import CallUsage
from eloledger.runner.evidence import private_logs

_PACKAGES = {"claude-code": "claude_code", "codex": "codex", "gemini-cli": "gemini_cli"}
AGREE, DISAGREE, UNCHECKED = "agree", "disagree", "unchecked"


@dataclass
class LogUsage:
    total: CallUsage
    calls: list[dict[str, Any]] = field(default_factory=list)  # one ledger-shaped row per call


def read_log_usage(agent: str, home: Path) -> LogUsage | None:
    """Every deduplicated model call in the logs under the session's HOME (read from a private
    copy, :func:`~eloledger.runner.evidence.private_logs`); None if unreadable."""
    try:
        logs = importlib.import_module(f"eloledger.agents.{_PACKAGES[agent]}.logs")
        from eloledger.agents.logscan import LogScanner  # type: ignore[import-not-found]
    except ImportError:
        return None
    rows: list[dict[str, Any]] = []
    scanner = LogScanner(logs, emit=rows.append, settle_s=0.0)
    with private_logs(home) as copy:  # the agent's HOME is never read in place
        if copy is None:
            return None
        for root in logs.default_roots({"HOME": str(copy)}):
            scanner.scan(logs.find_files(root))
    total = CallUsage()
    for row in rows:
        total = total + CallUsage(
            prompt_tokens=int(row.get("prompt_tokens") or 0),
            completion_tokens=int(row.get("completion_tokens") or 0),
            cached_tokens=int(row.get("cached_tokens") or 0),
            cache_write_tokens=int(row.get("cache_write_tokens") or 0),
            reasoning_tokens=int(row.get("reasoning_tokens") or 0),
        )
    return LogUsage(total, rows)


def compare(report: CallUsage | None, logged: LogUsage | None) -> str:
    """agree / disagree on prompt and completion tokens; unchecked when one side is missing."""
    if report is None or logged is None or not logged.calls:
        return UNCHECKED
    same = (report.prompt_tokens, report.completion_tokens) == (
        logged.total.prompt_tokens,
        logged.total.completion_tokens,
    )
    return AGREE if same else DISAGREE
