"""One line of meaning for every key of the experiment spec.

``docs/spec-reference.md`` is generated from this module and from the parser in ``spec.py``
(the keys, their types, bounds and stated defaults are read from the parser's own calls), so the
reference cannot drift from the code: a key the parser accepts without a line here, or a line
for a key it does not accept, fails ``tests/docs/test_docs_spec_reference.py``.
"""

from __future__ import annotations

MEANINGS: dict[str, dict[str, str]] = {
    "experiment": {
        "name": "the experiment's name: on every ledger row, and the default ledger's file name",
        "profile": 'the gateway profile (`eloledger profile list`); `"sim"` is the embedded simulator',
        "model": "the model every arm asks for, unless the arm names its own",
        "wire_api": "the wire protocol the SDK speaks to the gateway",
        "ledger": "the token ledger to append to (relative to the spec's folder); `--ledger` overrides it",
        "concurrency": "calls in flight at once, across arms",
        "seed": "seed of the task shuffle, the sampling order and the simulator",
        "sessions": "independent sessions (attempt sequences) of every arm on every task",
        "timeout_s": "seconds one model call may take before it counts as a timeout",
        "description": "free text for the reader of the spec; the run does not use it",
        "anchor": "the arm set at 1000 Elo in the run's table",
    },
    "budget": {
        "per_task_tokens": "the token budget of one task; `same_budget` arms split it over their calls",
        "max_total_tokens": "hard stop: no call starts once the run has spent this many tokens",
    },
    "tasks": {
        "source": "`builtin:arith`, `builtin:code`, `builtin:agent-code`, `builtin:agent-opt`, or a JSONL, CSV or Parquet file",
        "limit": "run only the first N tasks (after the shuffle)",
        "shuffle": "shuffle the tasks with the experiment's seed before taking the limit",
        "train": "the task file of the train split (with `split`, instead of `source`)",
        "val": "the task file of the val split (with `split`, instead of `source`)",
        "test": "the task file of the test split (with `split`, instead of `source`)",
        "split": "which split runs (with train/val/test files), or the rows of one file kept",
        "tuned_on": "the split the candidates were tuned on; a fairness verdict read on it says so loudly",
        "fields": 'which column is which: `{id = "qid", prompt = "q", answer = "a"}` (also tests, split, tags)',
        "answer_pattern": "a regex whose group 1, applied to the answer column, is the answer (`#### (.*)`)",
        "dataset": 'the `datasets` loader over local data: `"json"`, `"parquet"`, `"csv"` or a folder (extra `hf`)',
        "data_files": "the files `dataset` reads: a path, a list of paths, or a table of split = path(s)",
    },
    "arms": {
        "name": "the arm's name, unique in the spec (a ladder `n = [...]` adds `_nK`)",
        "kind": "the strategy: one answer, best of n, majority of n, debate, self-refine, or an agent CLI",
        "n": "samples per session (debaters for a debate, sessions for an agent); a list makes one arm per value",
        "k": "another name for `n` (give one of them)",
        "temperature": "sampling temperature of the arm's calls",
        "select": "how the arm's answer is picked: verifier (the tests or rule), judge (LLM knockout), majority, none",
        "max_tokens": "per-call `max_tokens`",
        "same_budget": "split `[budget] per_task_tokens` over the arm's calls: `max_tokens = per_task_tokens // (n × rounds)`",
        "system": "the arm's system prompt (a chain-of-thought arm is one)",
        "prompt_template": "text around each task's prompt; must hold `{prompt}`",
        "model": "the arm's own model",
        "profile": "the arm's own gateway profile",
        "rounds": "rounds of a debate or refine arm; each later round reads the previous answers",
        "agent": "the agent CLI that plays the arm",
        "max_turns": "turn limit of a session (Claude Code, Gemini CLI; codex exec has none)",
        "effort": "reasoning effort (Claude Code `--effort`, Codex `model_reasoning_effort`)",
        "args": "extra CLI flags, checked against the CLI's `--help` when the run starts",
        "timeout_s": "seconds a session may run; then its whole process group is killed",
        "checkpoints": "snapshot the session's work folder on a 1.5× grid of tokens, turns or seconds",
        "checkpoint_start": "the grid's first step (default: the first turn's tokens, turn 1, its second)",
    },
    "judge": {
        "kind": "auto: rule for tasks with an answer, tests for tasks with tests, the LLM judge for prompt-only tasks",
        "mode": "how the rule judge compares an answer",
        "tolerance": "numeric mode: the largest difference that still matches",
        "pattern": "regex mode: the answer must match this (with `{answer}`)",
        "timeout_s": "tests judge: seconds per task",
        "memory_mb": "tests judge: memory limit of the sandboxed code",
        "model": "the LLM judge's model (default: the experiment's)",
        "max_tokens": "the LLM judge's `max_tokens`",
        "temperature": "the LLM judge's temperature",
        "sandbox": "where judged code and agent CLIs run: auto (bwrap, refuse without it), bwrap, none",
    },
    "retry": {
        "max_attempts": "attempts per call, the first included",
        "base_s": "first back-off wait; it doubles each attempt",
        "cap_s": "the longest back-off wait",
        "retry_after_cap_s": "the longest wait a `Retry-After` header can ask for",
    },
    "sim": {
        "speed": "the simulator's streaming speed factor",
        "fault": "a fault mode for every request (`eloledger sim --help` lists them)",
        "fault_rate": "the share of requests that get the fault",
        "seed": "the simulator's seed",
        "api_key": "the key the simulator demands (none: any key; the runner sends `sim`)",
    },
    "gates": {
        "arms": "the four-arm design, so `fairness --gates FILE` needs no arm flags: `{old_1, new_1, old_n, new_n}`",
        "min_same_budget_gain": "n=1 pass@1 gain at least this, with its 95% interval excluding 0",
        "min_same_budget_gain_rule": "how that gain is read: `guide` (as above) or `lower_bound` (the interval's lower end)",
        "max_token_growth_ratio": "candidate / baseline tokens per success at n=1, at most this",
        "max_latency_growth_ratio": "candidate / baseline p95 `latency_ms` at n=1, at most this",
        "max_regressions": "tasks the baseline solved at n=1 that the candidate fails, at most this",
        "max_regression_rate": "the same as a share of the baseline's solved tasks",
        "bootstrap_rounds": "rounds of the paired task bootstrap behind the intervals",
        "min_tag_gain": "per stratum (rows' `tags`), the point gain at least this: `{regex = 0.0}`",
    },
}

# Defaults the parser works out rather than states in its call (None there, or an expression).
DEFAULTS_IN_WORDS: dict[str, str] = {
    "experiment.wire_api": "the profile's wire, else `openai-chat`",
    "experiment.ledger": "`NAME.ledger.jsonl` beside the spec",
    "experiment.anchor": "the arm named `baseline`, else the first arm",
    "experiment.model": "the profile's model for the client (the simulator's own on `sim`)",
    "budget.per_task_tokens": "no budget",
    "budget.max_total_tokens": "no limit",
    "tasks.source": "required, unless train/val/test or dataset is given",
    "tasks.limit": "every task",
    "tasks.split": "every row",
    "arms.n": "1 (single, refine), 2 (debate); required for best_of_n, self_consistency",
    "arms.rounds": "2 for debate and refine, else 1",
    "arms.select@chat": "verifier (best_of_n), majority (self_consistency, debate), else none",
    "arms.select@agent": "none for n = 1, else verifier",
    "arms.max_tokens": "512; with same_budget, per_task_tokens // (n × rounds)",
    "arms.temperature": "0 for an arm that takes one sample (a ladder's `_n1` too), else 0.7",
    "arms.model@chat": "the experiment's model",
    "arms.model@agent": "the profile's model for that client",
    "arms.profile": "the experiment's profile",
    "arms.agent": "required for kind = agent",
    "arms.max_turns": "the CLI's own",
    "arms.effort": "the CLI's own",
    "judge.model": "the experiment's model",
    "sim.seed": "the experiment's seed",
    "gates.bootstrap_rounds": "2000 (`fairness --bootstrap N` overrides it)",
}

# Keys the parser reads outside its typed getters (so their type cannot be read off a call):
# table.key (arms: table.key@chat|agent|every) -> (type, default).
READ_ELSEWHERE: dict[str, tuple[str, str]] = {
    "experiment.description": ("string", "none"),
    "tasks.train": ("string (path)", "none"),
    "tasks.val": ("string (path)", "none"),
    "tasks.test": ("string (path)", "none"),
    "tasks.fields": ("table: field = column", "the recognised names"),
    "tasks.dataset": ("string", "none"),
    "tasks.data_files": ("string, list of strings, or table of split = path(s)", "none"),
    "arms.args@agent": ("list of strings", "`[]`"),
}
