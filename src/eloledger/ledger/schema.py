"""Ledger row schema v1: the canonical field names (``FIELDS``, LedgerRow's in ``row.py``, the
one place they are listed), what each means and which rows carry it (``FIELD_GROUPS``, which
docs/make_ledger_reference.py turns into docs/ledger-reference.md), and the names found in the
wild.

A row is one model call (or one attempt of it). ``session`` is an independent attempt
sequence of one arm on one task (budget curves cut sessions at token checkpoints);
``sample`` numbers the samples inside a session, ``round`` the rounds of a multi-round
strategy, ``attempt`` the retries of one call. ``ts`` is Unix time in seconds (float).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eloledger.ledger.row import SCHEMA_VERSION as SCHEMA_VERSION
from eloledger.ledger.row import LedgerRow

# Canonical fields, in the order a writer emits them: LedgerRow's (the one row contract).
FIELDS: tuple[str, ...] = LedgerRow.__struct_fields__

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


@dataclass(frozen=True)
class FieldDoc:
    """One ledger field as docs/ledger-reference.md shows it (made by
    docs/make_ledger_reference.py, which takes the field's JSON type from LedgerRow; a test keeps
    the page equal to this table, another this table's names equal to LedgerRow's fields)."""

    name: str
    rows: str  # the roles whose rows carry it ("every": all of them)
    meaning: str


_CHAT = "sample, select, judge, probe"
_CALLS = "sample, select, judge, probe, call"

FIELD_GROUPS: tuple[tuple[str, tuple[FieldDoc, ...]], ...] = (
    ("Identity", (
        FieldDoc("v", "every", "schema version (1)"),
        FieldDoc("run_id", "every", "the run that wrote the row"),
        FieldDoc("experiment", "every", "the spec's experiment name"),
        FieldDoc("task_id", "every", "the task"),
        FieldDoc("arm", "every",
                 "the arm (a strategy or agent); `judge` on judge rows"),
        FieldDoc("session", "every",
                 "one independent attempt sequence of one arm on one task (an imported "
                 "session's id)"),
        FieldDoc("sample", "every",
                 "the sample inside a session; on judge rows the match"),
        FieldDoc("round", _CALLS,
                 "the round of a multi-round strategy; the order the answers were shown on "
                 "judge rows; the call's number inside its session on call rows"),
        FieldDoc("role", "every",
                 "sample | select | judge | probe | checkpoint | call"),
        FieldDoc("attempt", _CALLS, "the try of one call (retries count up)"),
        FieldDoc("ts", "every", "Unix time in seconds when the row was written"),
    )),
    ("Model and gateway", (
        FieldDoc("model", "every", "the model asked for"),
        FieldDoc("model_answered", _CALLS,
                 "the model that answered (gateway header, else the body): fallbacks show"),
        FieldDoc("profile", _CALLS, "the profile the run used"),
        FieldDoc("base_url", _CALLS, "the gateway root (secrets scrubbed)"),
        FieldDoc("wire_api", _CALLS,
                 "openai-chat | openai-responses | anthropic | gemini"),
        FieldDoc("request_id", _CALLS,
                 "the gateway's id of the request (x-request-id, x-litellm-call-id)"),
        FieldDoc("call_id", _CHAT,
                 "the provider's id of one model call (message.id, response_id, ...); an "
                 "agent session's id on its session row"),
    )),
    ("Tokens", (
        FieldDoc("prompt_tokens", _CALLS,
                 "all input tokens, cache reads and writes included"),
        FieldDoc("completion_tokens", _CALLS,
                 "all output tokens, reasoning included"),
        FieldDoc("total_tokens", _CALLS, "prompt + completion"),
        FieldDoc("reasoning_tokens", _CALLS, "part of completion_tokens"),
        FieldDoc("cached_tokens", _CALLS, "cache reads, part of prompt_tokens"),
        FieldDoc("cache_write_tokens", _CALLS,
                 "prompt tokens written to the cache, part of prompt_tokens"),
        FieldDoc("usage_source", _CALLS,
                 "server | estimated | missing | log | report: where the counts came from"),
        FieldDoc("usage_note", "sample, call",
                 "no_usage | zero_usage: the gateway sent no usage, or all zeros"),
    )),
    ("Outcome", (
        FieldDoc("status", _CALLS, "ok | error"),
        FieldDoc("error_class", _CALLS,
                 "what kind of error (auth, rate_limit, api, timeout, max_turns, ...)"),
        FieldDoc("error", _CALLS, "the error's message (secrets scrubbed)"),
        FieldDoc("http_status", _CALLS, "the gateway's HTTP status"),
        FieldDoc("will_retry", _CALLS,
                 "true on an error row the runner retries (so it is not final)"),
        FieldDoc("finish_reason", _CHAT, "stop | length | ..., as the gateway said"),
        FieldDoc("max_tokens", _CHAT, "the call's output limit"),
        FieldDoc("temperature", _CHAT, "the call's sampling temperature"),
        FieldDoc("latency_ms", _CALLS,
                 "wall time of the call (of the whole session on an agent's session row)"),
        FieldDoc("ttft_ms", _CALLS, "time to the first streamed token"),
        FieldDoc("content", _CHAT,
                 "the answer's text (an agent's final message, cut to its first part)"),
        FieldDoc("warning", "sample",
                 "a note on an agent session's count (estimated or no model call seen)"),
    )),
    ("Scores", (
        FieldDoc("score", "sample, select, checkpoint",
                 "the task's score of the answer (or of the snapshot)"),
        FieldDoc("passed", "sample, select, checkpoint",
                 "whether the answer (or the snapshot) passes the task"),
        FieldDoc("direction", "sample, checkpoint",
                 "max | min: whether a higher score is better (scored tasks)"),
        FieldDoc("sandbox", "sample, checkpoint",
                 "bwrap | none: what the judged code ran in"),
    )),
    ("Arms and tasks", (
        FieldDoc("split", "every", "train | val | test: the task's split"),
        FieldDoc("tags", "every",
                 "the task's tags (problem type, source, ...)"),
        FieldDoc("prompt_hash", "sample, select",
                 "a hash of the arm's system prompt and template"),
        FieldDoc("feedback", "sample",
                 "none | debaters | self | tests: what a debate or refine round was shown"),
        FieldDoc("test_detail", "sample",
                 "a refine arm's failing-tests message, quoted back in its next round"),
    )),
    ("Judge rows", (
        FieldDoc("judged", "judge",
                 "what the judge compared: `a vs b` (two arms) or one arm (a knockout)"),
        FieldDoc("winner", "judge", "the arm the verdict chose (no tie)"),
        FieldDoc("opponent", "judge", "the arm it chose against"),
        FieldDoc("judge_flags", "judge",
                 "positions (A, B) whose answer speaks to the judge"),
    )),
    ("Agent sessions", (
        FieldDoc("agent", "sample, call, checkpoint",
                 "the agent CLI of an agent arm (claude-code | codex | gemini-cli)"),
        FieldDoc("turns", "sample", "model turns of the session"),
        FieldDoc("tool_calls", "sample", "tool calls of the session"),
        FieldDoc("calls", "sample", "model calls the meter saw in the session"),
        FieldDoc("max_turns", "sample", "the arm's turn limit"),
        FieldDoc("usage_check", "sample",
                 "agree | disagree | unchecked: the CLI's own report against the meter"),
        FieldDoc("usage_check_detail", "sample", "what disagreed"),
        FieldDoc("meter_refused", "sample",
                 "requests the meter refused (without the session's token)"),
        FieldDoc("evidence", "sample",
                 "the folder holding the session's files, logs and snapshots"),
    )),
    ("Checkpoints", (
        FieldDoc("checkpoint", "checkpoint", "the snapshot's number in its session"),
        FieldDoc("final", "checkpoint", "the snapshot taken at the session's end"),
        FieldDoc("budget_tokens", "checkpoint",
                 "the session's tokens when the snapshot was taken (the meter's count)"),
        FieldDoc("budget_turns", "checkpoint", "its turns then"),
        FieldDoc("budget_seconds", "checkpoint", "its seconds then"),
        FieldDoc("snapshot", "checkpoint",
                 "the snapshot's folder, relative to the ledger's"),
    )),
    ("Imported logs", (
        FieldDoc("source", "sample",
                 "claude-code | codex | gemini-cli | inspect: where the row came from"),
        FieldDoc("project", "sample", "the working directory the session ran in"),
        FieldDoc("dedupe_key", "sample",
                 "the key the import knows the call by, where it is not call_id"),
        FieldDoc("sidechain", "sample", "a Claude Code sidechain (subagent) call"),
    )),
)  # fmt: skip


def documented_fields() -> frozenset[str]:
    """Every field docs/ledger-reference.md describes."""
    return frozenset(f.name for _, group in FIELD_GROUPS for f in group)


def undocumented(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Fields of ``rows`` the reference does not describe, each with the role of a row that
    carries it (what a writer drifting from the table looks like)."""
    known = documented_fields()
    return {k: str(row.get("role")) for row in rows for k in row if k not in known}
