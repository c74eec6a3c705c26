"""Ledger row schema v1: the canonical field names and the names found in the wild.

A row is one model call (or one attempt of it). ``session`` is an independent attempt
sequence of one arm on one task (budget curves cut sessions at token checkpoints);
``sample`` numbers the samples inside a session, ``round`` the rounds of a multi-round
strategy, ``attempt`` the retries of one call. ``ts`` is Unix time in seconds (float).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SCHEMA_VERSION = 1

# Canonical fields, in the order a writer emits them.
FIELDS: tuple[str, ...] = (
    "v",
    "run_id",
    "experiment",
    "task_id",
    "arm",
    "session",
    "sample",
    "round",
    "role",  # sample | select | judge | probe
    "model",
    "profile",
    "base_url",
    "wire_api",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_tokens",
    "usage_source",  # server | estimated | missing
    "latency_ms",
    "ttft_ms",
    "status",  # ok | error
    "error_class",
    "error",
    "http_status",
    "attempt",
    "will_retry",  # true on an error row that the runner retries (so it is not final)
    "finish_reason",
    "max_tokens",
    "temperature",
    "ts",
    "content",
    "score",
    "passed",
    # Agent sessions and imported logs.
    "source",  # where an imported row came from: claude-code | codex | gemini-cli | inspect
    "agent",  # the agent CLI of an agent arm
    "project",  # the working directory a logged session ran in
    "call_id",  # the provider's id of one model call (message.id, response_id, ...)
    "cache_write_tokens",  # prompt tokens written to the cache (part of prompt_tokens)
    "turns",  # model turns of an agent session
    "tool_calls",  # tool calls of an agent session
    "usage_check",  # agree | disagree | unchecked: the final report vs the session log
    "request_id",  # the gateway's id of the request (x-request-id, x-litellm-call-id)
    "model_answered",  # the model that answered (gateway header, else the body): fallbacks show
    "sandbox",  # judged rows: what the judged code ran in (bwrap | none)
    # Arms and splits: written by the runner on its rows.
    "split",  # train | val | test: the task's split (or the spec's [tasks] split)
    "tags",  # the task's tags (problem type, source, ...), a list of strings
    "prompt_hash",  # a hash of the arm's system prompt and template (the full text: run JSON)
    "feedback",  # debate/refine rounds: what the call was shown (none | debaters | self | tests)
    "test_detail",  # a refine arm's failing-tests message, quoted back in its next round
    "judge_flags",  # judge rows: positions (A, B) whose answer speaks to the judge
)

# checkpoint: an agent's snapshot; call: one gateway call of an agent session (agent_run.py)
ROLES = ("sample", "select", "judge", "probe", "checkpoint", "call")
USAGE_SOURCES = ("server", "estimated", "missing", "log", "report")
STATUSES = ("ok", "error")

# Field names found in other tools' logs -> canonical name.
ALIASES: dict[str, str] = {
    "input_tokens": "prompt_tokens",
    "output_tokens": "completion_tokens",
    "request_tokens": "prompt_tokens",
    "response_tokens": "completion_tokens",
    "strategy": "arm",
    "task": "task_id",
    "case_id": "task_id",
    "text": "content",
    # The budget-fairness guide's own names.
    "judge_score": "score",
    "experiment_id": "experiment",
    "timestamp": "ts",  # ISO-8601 text or Unix seconds; canonical.parse_ts reads both
}

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")

# An agent session that ran out of turns or time is judged on the files it left (it failed at
# the task, not the infrastructure at serving it); auth, api, crash and budget stops are not.
JUDGED_AGENT_ERRORS = ("max_turns", "timeout")


def judgeable(row: Mapping[str, Any]) -> bool:
    """Whether a sample row takes part in selection, comparisons and budget curves.

    One rule for the runner and every reader, so an arm's Elo table and its curves judge the
    same sessions.
    """
    if str(row.get("status") or "ok") == "ok":
        return True
    return bool(row.get("agent")) and row.get("error_class") in JUDGED_AGENT_ERRORS
