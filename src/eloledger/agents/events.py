"""What one agent session has done so far, as read from its CLI's live event stream.

Each CLI's ``headless`` module folds its stream into this one shape, so the runner, the
counters and the Run view never need to know which CLI produced it. The exact count is the
meter's (``metered``, summed as each model call ends, from the gateway's answers); the stream
only gives ``est_tokens``, a running estimate shown until the first call is metered, and
``final``, the CLI's own report, which is a cross-check and never the count (the agent's
tools can write to the CLI's stdout).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from eloledger.agents.usage import CallUsage

# Error classes of an agent session row (besides the runner's own: timeout, crash).
AUTH, MAX_TURNS, TIMEOUT, CRASH, API = "auth", "max_turns", "timeout", "crash", "api"


@dataclass
class SessionState:
    """Live and final facts of one session; written by one parser, read by viewers."""

    agent: str
    task_id: str = ""
    arm: str = ""
    session: int = 0
    session_id: str | None = None  # the CLI's own id (Claude session_id, Codex thread_id)
    turns: int = 0  # model turns seen so far (the final report's count when it has one)
    tool_calls: int = 0
    est_tokens: int = 0  # estimated from the stream until the final report
    final: CallUsage | None = None  # the CLI's final report, summed over its models (a claim)
    metered: CallUsage | None = None  # the meter's sum of the calls ended so far (the count)
    models: dict[str, CallUsage] = field(default_factory=dict)  # per model, from the report
    model: str | None = None
    result_text: str = ""
    error_class: str | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    abort: bool = False  # the parser saw a failure the CLI would only retry (bad key): stop it

    @property
    def tokens(self) -> int:
        """The meter's exact count once a call has ended, the stream's estimate before."""
        return self.metered.total_tokens if self.metered is not None else self.est_tokens

    def add_metered(self, usage: CallUsage) -> None:
        self.metered = usage if self.metered is None else self.metered + usage

    @property
    def elapsed_s(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def fail(self, error_class: str, message: str) -> None:
        """Record the first failure (a later symptom must not mask the cause)."""
        if self.error_class is None:
            self.error_class, self.error = error_class, message[:500]

    def set_report(self, models: dict[str, CallUsage]) -> None:
        self.models = dict(models)
        total = CallUsage()
        for usage in models.values():
            total = total + usage
        self.final = total


def estimate_tokens(text: str) -> int:
    """About four characters per token: good enough for a live counter."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class LaunchRequest:
    """What a session asks of a CLI; each headless module turns it into a :class:`Launch`."""

    prompt: str
    root_url: str  # the gateway URL for this client (a root, or ending in /v1 for Codex)
    api_key: str
    workdir: str
    model: str | None = None
    max_turns: int | None = None
    effort: str | None = None
    args: tuple[str, ...] = ()
    auth: str = "x-api-key"  # Claude Code's header form (the profile's auth)
    headers: tuple[tuple[str, str], ...] = ()  # extra request headers


@dataclass
class Launch:
    """How to start one headless session: argv (first item the CLI's name), its extra
    environment, and files to write into the isolated HOME before it starts."""

    argv: list[str]
    env: dict[str, str]
    home_files: dict[str, str] = field(default_factory=dict)


def load_event(line: str) -> dict[str, Any] | None:
    """One JSON event of a CLI's stream; None for anything else it prints (banners, blanks)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
