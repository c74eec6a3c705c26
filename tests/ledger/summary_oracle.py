"""The counting rules written a second time, whole-ledger and in numpy: the tests' oracle.

``eloledger tokens`` folds ledgers batch by batch with :class:`eloledger.ledger.tally.TokenTally`
(the one implementation in ``src``). This module is the summary as it was computed before the
fold existed, from a whole :class:`~eloledger.ledger.reader.Ledger` at once: an independent
reading of the rules in ``eloledger.ledger.summary``'s docstring, so a test that compares the
two catches a rule the fold gets wrong, not only a batch boundary.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from eloledger.errors import CodedWarning
from eloledger.ledger.columns import Factor
from eloledger.ledger.reader import Ledger
from eloledger.ledger.summary import (
    ABSURD_TOKENS,
    ARM_ROLES,
    MISSING_NAME,
    TOKEN_COUNT_COLUMNS,
    _key,
    _number,
    _share,
    counted_usage,
    judge_group,
    latency_stats,
)


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
        out.append(
            CodedWarning(
                "usage.estimated",
                f"{int(guessed.sum())} ok call(s) have ESTIMATED token counts (the gateway reported "
                f"no usage; eloledger guessed from characters), by {by}: {named}; fix: have the "
                "gateway report usage (stream_options.include_usage, or a gateway that sends usage "
                "on streams) - see 'eloledger doctor --ledger'",
            )
        )
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
