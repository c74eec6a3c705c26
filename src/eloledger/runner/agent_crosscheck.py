"""Cross-check the meter's count of a session against what the CLI says it spent.

The meter (:mod:`eloledger.meter`) is the source: it read every model call off the gateway's
answers. The CLI's final report and the session log it wrote are the agent's own claims (its
tools can write both), so they only confirm or contradict the meter: ``usage_check`` is
``agree``, ``disagree`` (with a one-line ``usage_check_detail``) or ``unchecked`` when the CLI
said nothing. The log readers are the importer's (``eloledger.agents.<cli>.logs`` with the
shared deduplicating scanner), so the sources are read by independent code.
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from eloledger.agents.usage import CallUsage
from eloledger.ledger.row import LedgerRow
from eloledger.meter import MeteredCall
from eloledger.runner.evidence import private_logs

_PACKAGES = {"claude-code": "claude_code", "codex": "codex", "gemini-cli": "gemini_cli"}
AGREE, DISAGREE, UNCHECKED = "agree", "disagree", "unchecked"


@dataclass
class LogUsage:
    total: CallUsage
    calls: list[LedgerRow] = field(default_factory=list)  # one ledger row per call


def read_log_usage(agent: str, home: Path) -> LogUsage | None:
    """Every deduplicated model call in the logs under the session's HOME (read from a private
    copy, :func:`~eloledger.runner.evidence.private_logs`); None if unreadable."""
    try:
        logs = importlib.import_module(f"eloledger.agents.{_PACKAGES[agent]}.logs")
        from eloledger.agents.logscan import LogScanner  # type: ignore[import-not-found]
    except ImportError:
        return None
    rows: list[LedgerRow] = []
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


def cross_check(
    calls: list[MeteredCall], report: CallUsage | None, logged: LogUsage | None
) -> tuple[str, str | None]:
    """``(usage_check, detail)``: the report must equal the meter's sum (prompt and
    completion), and every call in the session log must be one the meter counted (the log may
    leave calls out: Claude Code logs no entry for its first, tool-less call)."""
    metered = CallUsage()
    for call in calls:
        metered = metered + call.counted
    notes: list[str] = []
    checked = False
    if report is not None:
        checked = True
        if (report.prompt_tokens, report.completion_tokens) != (
            metered.prompt_tokens,
            metered.completion_tokens,
        ):
            notes.append(
                f"the CLI reported {report.total_tokens} tokens, the meter counted "
                f"{metered.total_tokens} in {len(calls)} calls"
            )
    if logged is not None and logged.calls:
        checked = True
        left = Counter(
            (c.usage.prompt_tokens, c.usage.completion_tokens) for c in calls if c.usage
        )
        unmatched = 0
        for row in logged.calls:
            key = (int(row.get("prompt_tokens") or 0), int(row.get("completion_tokens") or 0))
            if left[key] > 0:
                left[key] -= 1
            else:
                unmatched += 1
        if unmatched:
            notes.append(
                f"{unmatched} of the session log's {len(logged.calls)} calls match no metered call"
            )
    if not checked:
        return UNCHECKED, None
    return (DISAGREE, "; ".join(notes)) if notes else (AGREE, None)
