"""``run --shard I/N``: a deterministic slice of a run, so any scheduler can spread it.

The (task, arm, session) units are sliced by task: every arm and session of one task (for
agent arms, all ``n`` sessions of each) go to the same shard, tasks dealt round robin in the
spec's task order. Why whole tasks: comparisons are made within a task and averaged over its
sessions, so a shard that holds whole tasks writes exactly the comparisons the unsharded run
would for them, and the shards' comparison files simply concatenate. The same spec and N
always give the same slices, whatever machine runs them; each shard writes its own ledger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from eloledger.errors import UserError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as schedulers number array jobs from 1 (use I+1 for 0-based ones)
    count: int

    def owns(self, task_index: int) -> bool:
        """Whether the task at ``task_index`` (0-based, spec order) is in this shard."""
        return task_index % self.count == self.index - 1

    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    match = _SHARD.match(text or "")
    if match:
        index, count = int(match.group(1)), int(match.group(2))
        if 1 <= index <= count:
            return Shard(index, count)
    raise UserError(
        f"--shard {text!r}: expected I/N with 1 <= I <= N",
        fix="e.g. --shard 1/4 (Slurm: --shard $((SLURM_ARRAY_TASK_ID+1))/$SLURM_ARRAY_TASK_COUNT)",
    )


def shard_ledger(ledger: Path, shard: Shard) -> Path:
    """``x.ledger.jsonl`` -> ``x.shard-1-of-4.ledger.jsonl`` (results/comparisons follow)."""
    name = ledger.name
    for tail in (".ledger.jsonl", ".jsonl"):
        if name.endswith(tail):
            stem = name[: -len(tail)]
            return ledger.with_name(f"{stem}.shard-{shard.index}-of-{shard.count}{tail}")
    return ledger.with_name(f"{name}.shard-{shard.index}-of-{shard.count}")
