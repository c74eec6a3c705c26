"""What one invocation of a run produced: the summary the CLI prints and the TUI shows.

Its own module because both the orchestrator (:mod:`.run`) and the LLM judge
(:mod:`.judging`, which counts its calls and missing verdicts on it) fill it in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunResult:
    run_id: str
    experiment: str
    ledger_path: Path
    comparisons_path: Path | None
    results_path: Path | None
    stopped: str  # completed | budget | cancelled | errors (persistent failures: see outcome)
    attempts: int = 0  # sample-call attempts made by this invocation (ledger rows written)
    retries: int = 0
    judge_calls: int = 0
    resumed_calls: int = 0  # calls already complete in the ledger before this invocation
    not_run: int = 0  # calls never made (budget or cancel)
    arm_tokens: int = 0  # tokens of every sample row of the experiment (the arms' cost)
    judge_tokens: int = 0
    comparisons: int = 0
    elapsed_s: float = 0.0
    base_url: str | None = None
    arms: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # why the run produced nothing usable (exit 1): arms without a successful call, an early
    # stop on persistent failures, judge replies without a verdict
    failures: list[str] = field(default_factory=list)
    # judge calls that gave no verdict (failed, or named neither A, B nor TIE), per arm;
    # a pairwise match "a vs b" counts for both arms; per pair in judge_no_verdict_pairs
    judge_no_verdict: dict[str, int] = field(default_factory=dict)
    judge_no_verdict_pairs: dict[str, int] = field(default_factory=dict)
    judge_verdict_calls: int = 0  # judge calls consulted (made now or found in the ledger)
    # how the tasks were judged (kind = "auto" judges each by what it has): rule, tests, llm
    judged_by: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the summary says besides warnings
