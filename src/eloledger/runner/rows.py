"""The runner's ledger row of one attempt of a chat or judge call.

Built in one place, as a :class:`~eloledger.ledger.row.LedgerRow`, so a name that is not a
ledger field (in the call's identity, or in what the answer adds) fails when the row is built,
not in a reader months later.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from eloledger.ledger.row import LedgerRow
from eloledger.runner.providers import CallResult
from eloledger.runner.resolve import Endpoint
from eloledger.tasks import Task


def task_labels(task: Task, split: str | None) -> dict[str, Any]:
    """``split`` (the task's, else the spec's) and ``tags`` on every row, so the gates select
    rows by them."""
    return {"split": task.split or split, "tags": list(task.tags)}


def call_row(
    identity: Mapping[str, Any],
    res: CallResult,
    *,
    run_id: str,
    experiment: str,
    model: str | None,
    endpoint: Endpoint,
    labels: Mapping[str, Any],
    attempt: int,
    max_tokens: int,
    temperature: float,
) -> LedgerRow:
    """One attempt's row: the run, the call's ``identity`` (task, arm, session, sample, round,
    role, ...), the endpoint, what the answer said, the task's ``labels``, the attempt."""
    return LedgerRow(
        run_id=run_id,
        experiment=experiment,
        **identity,
        model=model or endpoint.model,
        profile=endpoint.profile,
        base_url=endpoint.base_url,
        wire_api=endpoint.wire_api,
        **res.ledger_fields(),
        **labels,
        attempt=attempt,
        max_tokens=max_tokens,
        temperature=temperature,
        ts=time.time(),
    )
