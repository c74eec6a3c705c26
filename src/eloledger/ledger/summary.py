"""Token summaries per arm or per task, and per-arm costs for the Elo-per-token table.

Counting rules (the same everywhere, so the CLI, the TUI and the Elo table agree):

* Only rows whose ``role`` is in ``roles`` (default ``sample`` and ``select``) count; judge and
  probe calls are not part of an arm's cost.
* ``calls`` = ``ok`` + ``errors``: every row is one call (a retried attempt is a call too).
* Token sums (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) cover **ok rows with
  usage** only. An ok row without usage is counted in ``usage_missing`` and adds nothing, so it
  never passes for a zero-token success. Error rows are counted in ``errors``; if a server
  reported usage on failed calls, those tokens are left out of the sums and reported by
  :func:`summary_warnings` (they were spent, but they bought no answer, and putting them in the
  sums would make ``mean_total_tokens`` a cost per success instead of a cost per call).
* ``usage_estimated`` counts ok rows whose usage is eloledger's character estimate (the gateway
  sent none, typically on streams): they are in the sums, and ``estimated_token_share`` says how
  much of ``total_tokens`` they make, so an estimate never passes for a billed count.
* ``mean_total_tokens`` = ``total_tokens`` / (ok rows with usage).
* ``task_mean_total_tokens`` = the mean over tasks of each task's ``total_tokens`` in the group
  (tasks with at least one ok row with usage): normalise per task first, so that a few long
  tasks do not dominate an arm's cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eloledger.errors import CodedWarning
from eloledger.ledger.columns import COST_COLUMNS, SUMMARY_COLUMNS, Factor
from eloledger.ledger.reader import Ledger

__all__ = [
    "COST_COLUMNS",
    "SUMMARY_COLUMNS",
    "SUMMARY_FIELDS",
    "ArmCost",
    "arm_costs",
    "summarize",
    "summary_warnings",
]

MISSING_NAME = "(none)"
SUMMARY_FIELDS = (
    "name",
    "calls",
    "ok",
    "errors",
    "usage_missing",
    "usage_estimated",
    "estimated_token_share",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "mean_total_tokens",
    "task_mean_total_tokens",
)
BY_CHOICES = ("arm", "task", "session", "model", "day", "project", "source", "run")
ARM_ROLES = ("sample", "select")
TOKEN_COUNT_COLUMNS = ("prompt_tokens", "completion_tokens", "total_tokens", "reasoning_tokens")
ABSURD_TOKENS = 1e12  # no single call is billed a trillion tokens


@dataclass
class ArmCost:
    """What one arm spent and scored; the Elo table turns it into tokens per task and pass@k."""

    arm: str
    tasks: int  # tasks with at least one sample/select row of this arm
    tokens_per_task: float  # task-normalised mean, per session, of per-task totals (ok + usage)
    calls: int
    errors: int
    usage_missing: int
    samples_per_task: float  # mean over the arm's tasks of ok role=sample rows
    successes: int  # scored samples that passed
    attempts_scored: int  # role=sample rows with a known pass/fail
    per_task_n: dict[str, int] = field(default_factory=dict)  # task -> scored samples
    per_task_c: dict[str, int] = field(default_factory=dict)  # task -> passed samples
    error_tokens: int = 0  # tokens servers reported on failed calls (not in tokens_per_task)
    sessions_per_task: float = 1.0  # mean distinct sessions per task (independent repeats)
    total_tokens: float = 0.0  # ok rows with usage, all sessions: the numerator of tokens/success
    k: int | None = None  # scored samples per session (the k of pass@k), smallest over tasks
    usage_estimated: int = 0  # ok rows whose tokens are eloledger's estimate, not the gateway's
    estimated_token_share: float = 0.0  # share of total_tokens that is estimated


@dataclass
class _Groups:
    """Row selection and group/task codes shared by the summary and the arm costs."""

    names: list[str]
    group: np.ndarray  # group index per selected row
    task: np.ndarray  # task index per selected row
    n_tasks: int
    task_names: list[str]
    ok: np.ndarray
    usage: np.ndarray
    estimated: np.ndarray
    selected: np.ndarray  # mask over the ledger's rows


def _groups(ledger: Ledger, key: str, roles: tuple[str, ...]) -> _Groups:
    factor = _day_factor(ledger) if key == "day" else ledger.factor(key)
    selected = ledger.factor("role").mask(*roles)
    codes = factor.codes[selected]
    names = [*factor.levels, MISSING_NAME]
    group = np.where(codes < 0, len(factor.levels), codes)
    tasks = ledger.factor("task_id")
    tcodes = tasks.codes[selected]
    task = np.where(tcodes < 0, len(tasks.levels), tcodes)
    return _Groups(
        names=names,
        group=group,
        task=task,
        n_tasks=len(tasks.levels) + 1,
        task_names=[*tasks.levels, MISSING_NAME],
        ok=ledger.ok()[selected],
        usage=counted_usage(
            ledger.has_usage(),
            ledger.factor("usage_source").mask("estimated"),
            ledger.number("prompt_tokens"),
            ledger.number("total_tokens"),
        )[selected],
        estimated=ledger.factor("usage_source").mask("estimated")[selected],
        selected=selected,
    )


def counted_usage(
    known: np.ndarray, estimated: np.ndarray, prompt: np.ndarray, total: np.ndarray
) -> np.ndarray:
    """Rows whose usage counts: known, and not zero unless eloledger estimated it.

    The rule ``doctor --ledger`` applies (:func:`eloledger.doctor.ledger_audit._usage_missing`):
    an ok row with 0 total tokens, or an explicit 0 prompt tokens, is missing usage, never a
    free call; ``tokens``, ``elo --ledger`` and the TUI count it in ``usage_missing``. A row that
    gives only a total (no prompt count) is counted.
    """
    with np.errstate(invalid="ignore"):
        counted = (total > 0) & (prompt != 0)
    return known & (estimated | counted)


def _day_factor(ledger: Ledger) -> Factor:
    """The UTC day (YYYY-MM-DD) of each row's ``ts``; rows without one are missing."""
    ts = ledger.number("ts")
    known = np.isfinite(ts)
    days = np.full(len(ts), -1, dtype=np.int64)
    days[known] = np.floor(ts[known] / 86400).astype(np.int64)
    uniq, codes = np.unique(days[known], return_inverse=True)
    all_codes = np.full(len(ts), -1, dtype=np.int32)
    all_codes[known] = codes
    levels = [time.strftime("%Y-%m-%d", time.gmtime(int(d) * 86400)) for d in uniq.tolist()]
    return Factor(all_codes, levels)


def _per_task_mean(
    g: _Groups,
    good: np.ndarray,
    total: np.ndarray,
    n_groups: int,
    sessions: np.ndarray | None = None,
) -> np.ndarray:
    """Mean over tasks of each (group, task) total, over tasks with at least one good row.

    With ``sessions`` (an n_groups x n_tasks count), each task's total is divided by its
    sessions first: a session is one independent run of the arm on the task, so two sessions
    do not make the arm twice as expensive.
    """
    pair = g.group[good] * g.n_tasks + g.task[good]
    size = n_groups * g.n_tasks
    sums = np.bincount(pair, weights=total[good], minlength=size).reshape(n_groups, g.n_tasks)
    if sessions is not None:
        sums = sums / np.maximum(sessions, 1)
    seen = np.bincount(pair, minlength=size).reshape(n_groups, g.n_tasks) > 0
    n_seen = seen.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_seen > 0, sums.sum(axis=1) / np.maximum(n_seen, 1), np.nan)


def _sessions_per_pair(ledger: Ledger, g: _Groups, n_groups: int) -> np.ndarray:
    """Distinct sessions per (group, task); rows without a session count as one session."""
    size = n_groups * g.n_tasks
    pair = g.group * g.n_tasks + g.task
    if "session" not in ledger:
        return np.ones((n_groups, g.n_tasks))
    scodes = ledger.factor("session").codes[g.selected].astype(np.int64)
    n_levels = len(ledger.factor("session").levels) + 1
    distinct = np.unique(pair.astype(np.int64) * n_levels + (scodes + 1))
    counts = np.bincount(distinct // n_levels, minlength=size).reshape(n_groups, g.n_tasks)
    return np.maximum(counts, 1)


def summarize(
    ledger: Ledger, by: str = "arm", roles: tuple[str, ...] = ARM_ROLES
) -> list[dict[str, Any]]:
    """One dict per group (arm or task) with exactly the fields of ``SUMMARY_FIELDS``."""
    key = _key(by)
    g = _groups(ledger, key, roles)
    n = len(g.names)
    good = g.ok & g.usage
    tokens = {
        name: np.nan_to_num(ledger.number(name)[g.selected], nan=0.0)
        for name in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
    calls = np.bincount(g.group, minlength=n)
    ok = np.bincount(g.group[g.ok], minlength=n)
    missing = np.bincount(g.group[g.ok & ~g.usage], minlength=n)
    sums = {k: np.bincount(g.group[good], weights=v[good], minlength=n) for k, v in tokens.items()}
    task_mean = _per_task_mean(g, good, tokens["total_tokens"], n)
    guessed = good & g.estimated
    estimated = np.bincount(g.group[guessed], minlength=n)
    estimated_total = np.bincount(
        g.group[guessed], weights=tokens["total_tokens"][guessed], minlength=n
    )
    out = []
    for i, name in enumerate(g.names):
        if calls[i] == 0:
            continue
        with_usage = int(ok[i] - missing[i])
        total = _number(sums["total_tokens"][i])
        out.append(
            {
                "name": name,
                "calls": int(calls[i]),
                "ok": int(ok[i]),
                "errors": int(calls[i] - ok[i]),
                "usage_missing": int(missing[i]),
                "usage_estimated": int(estimated[i]),
                "estimated_token_share": _share(estimated_total[i], sums["total_tokens"][i]),
                "prompt_tokens": _number(sums["prompt_tokens"][i]),
                "completion_tokens": _number(sums["completion_tokens"][i]),
                "total_tokens": total,
                "mean_total_tokens": total / with_usage if with_usage else None,
                "task_mean_total_tokens": None if np.isnan(task_mean[i]) else float(task_mean[i]),
            }
        )
    return out


def summary_warnings(
    ledger: Ledger, by: str = "arm", roles: tuple[str, ...] = ARM_ROLES
) -> list[str]:
    """Things a reader of the summary should know: usage gaps, tokens spent on failed calls."""
    g = _groups(ledger, _key(by), roles)
    total = np.nan_to_num(ledger.number("total_tokens")[g.selected], nan=0.0)
    out = []
    missing = int((g.ok & ~g.usage).sum())
    if missing:
        out.append(
            f"{missing} ok call(s) have no token usage (none, or zero): counted in "
            "usage_missing, not in the sums (run 'eloledger doctor --ledger' to see which gateway drops usage)"
        )
    guessed = g.ok & g.usage & g.estimated
    if guessed.any():
        counts = np.bincount(g.group[guessed], minlength=len(g.names))
        named = ", ".join(f"{g.names[i]} ({counts[i]})" for i in np.flatnonzero(counts))
        out.append(CodedWarning(
            "usage.estimated",
            f"{int(guessed.sum())} ok call(s) have ESTIMATED token counts (the gateway reported "
            f"no usage; eloledger guessed from characters), by {by}: {named}; fix: have the "
            "gateway report usage (stream_options.include_usage, or a gateway that sends usage "
            "on streams) - see 'eloledger doctor --ledger'"
        ))
    failed = ~g.ok & g.usage
    if failed.any():
        spent = np.bincount(g.group[failed], weights=total[failed], minlength=len(g.names))
        parts = [f"{g.names[i]}: {_number(spent[i])}" for i in np.flatnonzero(spent)]
        if parts:
            out.append(
                "failed calls reported tokens that are not in the sums (" + ", ".join(parts) + ")"
            )
    out += count_warnings(ledger)
    return out


def count_warnings(ledger: Ledger) -> list[str]:
    """Token counts no gateway bills: fractions, absurd sizes, totals that do not add up."""
    out = []
    counts = {n: ledger.number(n) for n in TOKEN_COUNT_COLUMNS[:3] if n in ledger}
    odd = np.zeros(len(ledger), dtype=bool)
    for column in counts.values():
        known = np.nan_to_num(column, nan=0.0)
        odd |= (known != np.floor(known)) | (known > ABSURD_TOKENS)
    if odd.any():
        out.append(
            f"{int(odd.sum())} row(s) have fractional or absurd (> 1e12) token counts, first at "
            f"{ledger.where(int(np.flatnonzero(odd)[0]))}: check the tool that wrote them"
        )
    if {"prompt_tokens", "completion_tokens", "total_tokens"} <= counts.keys():
        p, c, t = counts["prompt_tokens"], counts["completion_tokens"], counts["total_tokens"]
        with np.errstate(invalid="ignore"):
            bad = (t != p + c) & ~np.isnan(p + c + t)
        if bad.any():  # a gateway may count reasoning outside completion: t = p + c + r is fine
            r = np.nan_to_num(ledger.load("reasoning_tokens"), nan=0.0)
            bad &= t != p + c + r
        if bad.any():
            out.append(
                f"{int(bad.sum())} row(s) have total_tokens != prompt_tokens + completion_tokens, "
                f"first at {ledger.where(int(np.flatnonzero(bad)[0]))}: the sums use "
                "total_tokens; check which count the gateway bills"
            )
    return out


def arm_costs(ledger: Ledger, *, threshold: float | None = None) -> dict[str, ArmCost]:
    """Per-arm cost and pass counts from sample/select rows (judge and probe rows never count).

    Read the ledger with ``read_ledger(path, columns=COST_COLUMNS)`` (or all columns).
    A sample is scored when ``passed`` is known, or, with ``threshold``, when ``score`` is
    known (passed = score >= threshold where ``passed`` is missing).
    """
    g = _groups(ledger, "arm", ARM_ROLES)
    n = len(g.names)
    total = np.nan_to_num(ledger.number("total_tokens")[g.selected], nan=0.0)
    good = g.ok & g.usage
    calls = np.bincount(g.group, minlength=n)
    ok = np.bincount(g.group[g.ok], minlength=n)
    missing = np.bincount(g.group[g.ok & ~g.usage], minlength=n)
    sessions = _sessions_per_pair(ledger, g, n)
    tokens_per_task = _per_task_mean(g, good, total, n, sessions)
    total_good = np.bincount(g.group[good], weights=total[good], minlength=n)
    error_tokens = np.bincount(
        g.group[~g.ok & g.usage], weights=total[~g.ok & g.usage], minlength=n
    )
    guessed = good & g.estimated
    estimated = np.bincount(g.group[guessed], minlength=n)
    estimated_total = np.bincount(g.group[guessed], weights=total[guessed], minlength=n)

    size = n * g.n_tasks
    pair = g.group * g.n_tasks + g.task
    ran = np.bincount(pair, minlength=size).reshape(n, g.n_tasks) > 0
    is_sample = ledger.factor("role").mask("sample")[g.selected]
    ok_samples = np.bincount(pair[is_sample & g.ok], minlength=size).reshape(n, g.n_tasks)

    passed = _passed(ledger, threshold)[g.selected]
    scored = is_sample & ~np.isnan(passed)
    n_scored = np.bincount(pair[scored], minlength=size).reshape(n, g.n_tasks)
    n_passed = np.bincount(pair[scored], weights=passed[scored], minlength=size).reshape(
        n, g.n_tasks
    )

    out: dict[str, ArmCost] = {}
    for i, name in enumerate(g.names):
        if calls[i] == 0:
            continue
        tasks = np.flatnonzero(ran[i])
        scored_tasks = np.flatnonzero(n_scored[i])
        per_session = n_scored[i, scored_tasks] / sessions[i, scored_tasks]
        out[name] = ArmCost(
            arm=name,
            tasks=len(tasks),
            tokens_per_task=float(tokens_per_task[i]),
            calls=int(calls[i]),
            errors=int(calls[i] - ok[i]),
            usage_missing=int(missing[i]),
            samples_per_task=(
                float((ok_samples[i, tasks] / sessions[i, tasks]).mean()) if len(tasks) else 0.0
            ),
            successes=int(round(n_passed[i].sum())),
            attempts_scored=int(n_scored[i].sum()),
            per_task_n={g.task_names[t]: int(n_scored[i, t]) for t in scored_tasks},
            per_task_c={g.task_names[t]: int(round(n_passed[i, t])) for t in scored_tasks},
            error_tokens=int(error_tokens[i]),
            sessions_per_task=float(sessions[i, tasks].mean()) if len(tasks) else 1.0,
            total_tokens=float(total_good[i]),
            k=int(np.floor(per_session.min())) if len(scored_tasks) else None,
            usage_estimated=int(estimated[i]),
            estimated_token_share=_share(estimated_total[i], total_good[i]) or 0.0,
        )
    return out


def _passed(ledger: Ledger, threshold: float | None) -> np.ndarray:
    passed = ledger.number("passed").copy()
    if threshold is not None:
        score = ledger.number("score")
        fill = np.isnan(passed) & ~np.isnan(score)
        passed[fill] = (score[fill] >= threshold).astype(np.float64)
    return passed


def _key(by: str) -> str:
    if by not in BY_CHOICES:
        raise ValueError(f"by must be one of {', '.join(BY_CHOICES)}, not {by!r}")
    return {"task": "task_id", "run": "run_id"}.get(by, by)


def _share(part: float, whole: float) -> float | None:
    return float(part / whole) if whole else None


def _number(value: float) -> int | float:
    """Token sums as ints when whole (they are, unless a ledger holds fractional counts)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def add_costs(
    groups: list[dict[str, Any]],
    ledger: Ledger,
    prices: dict[str, Any],
    by: str = "arm",
    roles: tuple[str, ...] = ARM_ROLES,
) -> list[str]:
    """Set ``cost`` on each group from the user's price table; warnings for unpriced models.

    Same rows as the token sums (ok rows with usage). A group that used any model without a
    price (or without the cache price its tokens need) gets ``cost`` None, never a partial sum.
    Read the ledger with ``PRICE_COLUMNS`` too.
    """
    from eloledger.ledger.prices import row_costs

    g = _groups(ledger, _key(by), roles)
    good = g.ok & g.usage
    model = ledger.factor("model")
    counts = {
        k: ledger.number(k)[g.selected]
        for k in ("prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens")
    }
    cost = row_costs(model.levels, model.codes[g.selected], counts, prices)
    n = len(g.names)
    unpriced = good & np.isnan(cost)
    sums = np.bincount(g.group[good], weights=np.nan_to_num(cost[good]), minlength=n)
    blocked = np.bincount(g.group[unpriced], minlength=n) > 0
    index = {name: i for i, name in enumerate(g.names)}
    for group in groups:
        i = index[group["name"]]
        group["cost"] = None if blocked[i] else float(sums[i])
    if not unpriced.any():
        return []
    codes = model.codes[g.selected][unpriced]
    names = sorted({model.levels[c] if c >= 0 else MISSING_NAME for c in codes.tolist()})
    return [
        f"no price (or no cache price) in prices.toml for: {', '.join(names)}; groups that "
        "used them have no cost (eloledger never guesses prices)"
    ]


def latency_stats(values: np.ndarray) -> dict[str, float | None]:
    """p50 and p95 of latencies in ms (NaN dropped): one definition for ``tokens``,
    ``elo --ledger``, the run summary and the fairness gates."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return {"n": 0, "p50": None, "p95": None}
    p50, p95 = np.percentile(finite, [50, 95])
    return {"n": int(len(finite)), "p50": round(float(p50), 3), "p95": round(float(p95), 3)}


def add_latency(
    groups: list[dict[str, Any]],
    ledger: Ledger,
    by: str = "arm",
    roles: tuple[str, ...] = ARM_ROLES,
) -> None:
    """Set ``latency_p50_ms`` / ``latency_p95_ms`` on each group: its ok calls' ``latency_ms``
    (None when no call recorded one). Read the ledger with ``latency_ms`` too."""
    g = _groups(ledger, _key(by), roles)
    latency = ledger.number("latency_ms")[g.selected]
    index = {name: i for i, name in enumerate(g.names)}
    for group in groups:
        mine = g.ok & (g.group == index[group["name"]])
        stats = latency_stats(latency[mine])
        group["latency_p50_ms"], group["latency_p95_ms"] = stats["p50"], stats["p95"]


def judge_summary(ledger: Ledger) -> dict[str, Any] | None:
    """The LLM judge's calls and tokens as one group: not an arm's cost, but
    the gateway bills them, so ``tokens`` shows them beside the arms' total. None: no judge."""
    if not ledger.factor("role").mask("judge").any():
        return None
    return judge_group(summarize(ledger, by="arm", roles=("judge",)))


def judge_group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JUDGE line from the judge's per-arm summaries (shared with ``ledger.tally``)."""
    keys = ("calls", "ok", "errors", "usage_missing", "usage_estimated")
    out: dict[str, Any] = {"name": "JUDGE", **{k: sum(r[k] for r in rows) for k in keys}}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        out[key] = sum(r[key] for r in rows)
    with_usage = out["ok"] - out["usage_missing"]
    out["mean_total_tokens"] = out["total_tokens"] / with_usage if with_usage else None
    out["by_arm"] = {r["name"]: r["total_tokens"] for r in rows}
    return out


def arm_latency(ledger: Ledger) -> dict[str, dict[str, float | None]]:
    """p50/p95 ``latency_ms`` of each arm's ok sample/select calls, from the columns (read the
    ledger with arm, role, status and latency_ms)."""
    arms = ledger.factor("arm")
    keep = ledger.factor("role").mask(*ARM_ROLES) & ledger.ok()
    latency = ledger.number("latency_ms")
    return {
        name: latency_stats(latency[keep & (arms.codes == code)])
        for code, name in enumerate(arms.levels)
    }
