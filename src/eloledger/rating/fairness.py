"""Budget fairness: did the new arm really improve, or did it just spend more? (four-arm design)

The design: ``old_1`` / ``new_1`` answer each task with single samples, ``old_n`` / ``new_n``
with N-way sampling (best-of-N, self-consistency, ...). Per task (tasks present in all four
arms) we measure:

* **pass@1** of a single-sample arm: the share of its scored sample rows that pass (each sample
  is one independent attempt);
* **pass@N** of an N-way arm: the share of its sessions that succeed, a session succeeding when
  its last scored ``select`` row passes (what the arm actually answers) or, without select rows,
  when any of its samples passes (the oracle pass@N);
* **tokens**: everything the arm spent on ``sample``/``select`` calls, failed calls with
  reported usage included (see :mod:`eloledger.rating.budget_sessions`).

A row passes when ``passed`` is true, or, without ``passed``, when ``score >= pass_threshold``.
Pass rates average the per-task rates (every task weighs the same); tokens per success and
token ratios are ratios of sums. The statistics, each with a paired task-level bootstrap 95%
interval (the same resampled tasks for all four arms in a round):

* ``pass1_delta`` = pass@1(new_1) - pass@1(old_1) -- the gain at the same (single-sample) budget;
* ``tokens_per_success_delta`` = TPS(new_1) - TPS(old_1) and ``tokens_per_success_ratio``;
* ``token_ratio_1`` = tokens(new_1) / tokens(old_1): whether "the same budget" really holds;
* ``passN_delta`` = pass@N(new_n) - pass@N(old_n);
* ``token_ratio_n`` = tokens(new_n) / tokens(old_n), and ``samples_ratio_n`` likewise for sample
  calls;
* ``interaction`` = (pass@N(new_n) - pass@N(old_n)) - (pass@1(new_1) - pass@1(old_1)).

**Decision rule** (applied in this order):

1. ``real_improvement`` when the pass@1 delta's interval lies above 0 **and** the new arm's tokens
   per success at n=1 are at most ``1 + tps_tolerance`` (default 1.10) times the old arm's.
2. ``budget_leakage`` when the pass@N delta's interval lies above 0 **and** the new N-way arm
   spent at least ``leak_ratio`` (default 1.5) times the old N-way arm's tokens or sample calls
   **and** the pass@1 delta's interval does not lie above 0: the gain appears only with more
   tokens or more samples.
3. ``inconclusive`` otherwise, with the reason (no clear gain, a same-budget gain bought with
   more tokens per success, a pass@N gain at similar cost without a pass@1 gain, or a loss).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eloledger import __version__
from eloledger.errors import UserError
from eloledger.rating.budget_sessions import BUDGET_ROLES, build_sessions, row_score

ROLES = ("old_1", "new_1", "old_n", "new_n")
TPS_TOLERANCE = 0.10
LEAK_RATIO = 1.5
PASS_THRESHOLD = 0.5
RULE = (
    "real_improvement: pass@1 delta CI above 0 and tokens per success at n=1 at most "
    "(1 + tps_tolerance) x old; budget_leakage: pass@N delta CI above 0, new_n spent >= "
    "leak_ratio x old_n's tokens or sample calls, and pass@1 delta CI not above 0; "
    "otherwise inconclusive"
)


@dataclass
class _ArmTasks:
    """Per-task sums of one arm (arrays aligned with the common task list)."""

    name: str
    attempts: np.ndarray  # attempts scored (samples for n=1, sessions for n=N)
    successes: np.ndarray
    tokens: np.ndarray
    samples: np.ndarray  # sample calls made


def fairness_verdict(
    rows: Iterable[Mapping[str, Any]],
    old_1: str,
    new_1: str,
    old_n: str,
    new_n: str,
    *,
    bootstrap: int = 2000,
    seed: int = 0,
    pass_threshold: float = PASS_THRESHOLD,
    tps_tolerance: float = TPS_TOLERANCE,
    leak_ratio: float = LEAK_RATIO,
) -> dict[str, Any]:
    """The archivable fairness record (see the module docstring for the statistics and rule)."""
    if bootstrap < 1:
        raise UserError(f"--bootstrap {bootstrap}: must be at least 1", fix="e.g. --bootstrap 2000")
    rows = [r for r in rows if str(r.get("role") or "sample") in BUDGET_ROLES]
    names = dict(zip(ROLES, (old_1, new_1, old_n, new_n), strict=True))
    known = sorted({str(r["arm"]) for r in rows if r.get("arm") is not None})
    missing = [f"{role}={arm!r}" for role, arm in names.items() if arm not in known]
    if missing:
        raise UserError(
            f"ledger: unknown arm(s) {', '.join(missing)}",
            fix=f"the ledger's arms are: {', '.join(known) or '(none)'}",
        )
    warnings: list[str] = []
    per_arm = {
        role: _task_table(rows, arm, role.endswith("_1"), pass_threshold)
        for role, arm in names.items()
    }
    common = sorted(set.intersection(*(set(t) for t in per_arm.values())))
    dropped = len(set.union(*(set(t) for t in per_arm.values()))) - len(common)
    if dropped:
        warnings.append(f"{dropped} task(s) not scored in all four arms were left out")
    if len(common) < 2:
        raise UserError(
            f"ledger: only {len(common)} task(s) have scored attempts in all four arms",
            fix="the paired comparison needs the same tasks (at least 2) under every arm",
        )
    arms = {role: _align(names[role], per_arm[role], common) for role in ROLES}
    rng = np.random.default_rng(seed)
    n_tasks = len(common)
    weights = np.vstack(
        [np.ones(n_tasks)]
        + [
            np.bincount(d, minlength=n_tasks)
            for d in rng.integers(0, n_tasks, (bootstrap, n_tasks))
        ]
    ).astype(float)
    stats = _statistics(arms, weights)
    metrics = {name: _summary(values) for name, values in stats.items()}
    verdict, reason = _decide(metrics, tps_tolerance, leak_ratio)
    return {
        "kind": "eloledger.fairness",
        "schema": 1,
        "eloledger_version": __version__,
        "inputs": {
            **names,
            "bootstrap": int(bootstrap),
            "seed": int(seed),
            "pass_threshold": pass_threshold,
            "tps_tolerance": tps_tolerance,
            "leak_ratio": leak_ratio,
        },
        "tasks": {"used": n_tasks, "dropped": dropped},
        "arms": {role: _arm_record(arms[role]) for role in ROLES},
        "metrics": metrics,
        "verdict": verdict,
        "reason": reason,
        "rule": RULE,
        "warnings": warnings,
    }


def _task_table(
    rows: list[Mapping[str, Any]], arm: str, single: bool, threshold: float
) -> dict[str, tuple[float, float, float, float]]:
    """task -> (attempts, successes, tokens, sample calls) for one arm."""
    own = [r for r in rows if str(r.get("arm")) == arm and r.get("task_id") is not None]
    out: dict[str, list[float]] = {}
    sessions = build_sessions(own).sessions
    for s in sessions:
        out.setdefault(s.task, [0.0, 0.0, 0.0, 0.0])[2] += s.total_tokens
    for r in own:
        if str(r.get("role") or "sample") == "sample":
            out.setdefault(str(r["task_id"]), [0.0, 0.0, 0.0, 0.0])[3] += 1
    if single:
        for r in own:
            passed = _passes(r, threshold)
            if passed is None or str(r.get("role") or "sample") != "sample":
                continue
            entry = out.setdefault(str(r["task_id"]), [0.0, 0.0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += passed
    else:
        for (task, _key), outcome in _session_outcomes(own, threshold).items():
            entry = out.setdefault(task, [0.0, 0.0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += outcome
    return {task: tuple(v) for task, v in out.items() if v[0] > 0}


def _session_outcomes(
    rows: list[Mapping[str, Any]], threshold: float
) -> dict[tuple[str, str], float]:
    """Success of each session: its last scored select row, else any scored sample passing."""
    selects: dict[tuple[str, str], float] = {}
    samples: dict[tuple[str, str], float] = {}
    for r in rows:
        passed = _passes(r, threshold)
        if passed is None:
            continue
        session = r.get("session")
        key = (str(r["task_id"]), "" if session in (None, "") else str(session))
        if str(r.get("role") or "sample") == "select":
            selects[key] = passed
        else:
            samples[key] = max(samples.get(key, 0.0), passed)
    return {**samples, **selects}


def _passes(row: Mapping[str, Any], threshold: float) -> float | None:
    if str(row.get("status") or "ok") != "ok":
        return None
    passed = row.get("passed")
    if isinstance(passed, (bool, int, float)) and passed in (0, 1):
        return float(passed)
    score = row_score(row)
    if score is None:
        return None
    return 1.0 if score >= threshold else 0.0


def _align(name: str, table: Mapping[str, tuple[float, ...]], tasks: list[str]) -> _ArmTasks:
    values = np.array([table[t] for t in tasks], dtype=float)
    return _ArmTasks(name, values[:, 0], values[:, 1], values[:, 2], values[:, 3])


def _statistics(arms: Mapping[str, _ArmTasks], weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each statistic for every weight row (row 0: the data itself; the rest: bootstrap)."""
    total = weights.sum(1)

    def rate(a: _ArmTasks) -> np.ndarray:
        return weights @ (a.successes / a.attempts) / total

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        top, bottom = weights @ num, weights @ den
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.inf)

    old1, new1, oldn, newn = (arms[r] for r in ROLES)
    tps_old = ratio(old1.tokens, old1.successes)
    tps_new = ratio(new1.tokens, new1.successes)
    pass1 = rate(new1) - rate(old1)
    pass_n = rate(newn) - rate(oldn)
    with np.errstate(invalid="ignore"):
        tps_delta = tps_new - tps_old
        tps_ratio = np.where(np.isfinite(tps_old), tps_new / tps_old, np.nan)
    return {
        "pass1_delta": pass1,
        "tokens_per_success_delta": tps_delta,
        "tokens_per_success_ratio": tps_ratio,
        "token_ratio_1": ratio(new1.tokens, old1.tokens),
        "passN_delta": pass_n,
        "token_ratio_n": ratio(newn.tokens, oldn.tokens),
        "samples_ratio_n": ratio(newn.samples, oldn.samples),
        "interaction": pass_n - pass1,
    }


def _summary(values: np.ndarray) -> dict[str, float | None]:
    """Point estimate (row 0) and the 95% percentile interval of the bootstrap rows."""
    point, boot = float(values[0]), values[1:]
    finite = boot[np.isfinite(boot)]
    if len(finite) < max(1, 0.9 * len(boot)):  # too many rounds without successes: no interval
        low = high = math.nan
    else:
        low, high = (float(v) for v in np.percentile(finite, [2.5, 97.5]))
    return {"estimate": _r(point), "ci_low": _r(low), "ci_high": _r(high)}


def _decide(
    metrics: Mapping[str, Mapping[str, float | None]], tol: float, leak: float
) -> tuple[str, str]:
    p1, pn = metrics["pass1_delta"], metrics["passN_delta"]
    tps = metrics["tokens_per_success_ratio"]["estimate"]
    tokens = metrics["token_ratio_n"]["estimate"] or 0.0
    samples = metrics["samples_ratio_n"]["estimate"] or 0.0
    p1_up = (p1["ci_low"] or 0.0) > 0
    p1_down = (p1["ci_high"] if p1["ci_high"] is not None else 0.0) < 0
    pn_up = (pn["ci_low"] or 0.0) > 0
    p1_text = _pp(p1)
    if p1_up and tps is not None and tps <= 1.0 + tol:
        return "real_improvement", (
            f"pass@1 improves by {p1_text} at the same budget and tokens per success change by "
            f"{_pct(tps - 1.0)} (within the {tol:.0%} tolerance)."
        )
    spent_more = tokens >= leak or samples >= leak
    if pn_up and spent_more and not p1_up:
        return "budget_leakage", (
            f"pass@N improves by {_pp(pn)} only while the new N-way arm spends {tokens:.2f}x the "
            f"tokens ({samples:.2f}x the samples) of the old one, and pass@1 at the same budget "
            f"changes by {p1_text}, not a clear gain."
        )
    if p1_up:
        shown = "an unknown amount more" if tps is None else f"{_pct(tps - 1.0)}"
        return "inconclusive", (
            f"pass@1 improves by {p1_text} but tokens per success change by {shown}, beyond the "
            f"{tol:.0%} tolerance."
        )
    if p1_down:
        return (
            "inconclusive",
            f"the new arm is worse at the same budget: pass@1 changes by {p1_text}.",
        )
    if pn_up:
        return "inconclusive", (
            f"pass@N improves by {_pp(pn)} at a similar cost ({tokens:.2f}x tokens), but pass@1 "
            f"at the same budget changes by {p1_text}, so the gain is not established per sample."
        )
    return "inconclusive", (
        f"neither pass@1 ({p1_text}) nor pass@N ({_pp(pn)}) shows a gain whose interval "
        "excludes zero."
    )


def _arm_record(arm: _ArmTasks) -> dict[str, Any]:
    successes, tokens = float(arm.successes.sum()), float(arm.tokens.sum())
    return {
        "name": arm.name,
        "attempts": int(arm.attempts.sum()),
        "successes": _r(successes),
        "pass_rate": _r(float(np.mean(arm.successes / arm.attempts))),
        "samples": int(arm.samples.sum()),
        "tokens": _r(tokens),
        "tokens_per_success": _r(tokens / successes) if successes > 0 else None,
    }


def _pp(metric: Mapping[str, float | None]) -> str:
    def pts(v: float | None) -> str:
        return "?" if v is None else f"{100 * v:+.1f}"

    return (
        f"{pts(metric['estimate'])} pp (95% CI {pts(metric['ci_low'])} to {pts(metric['ci_high'])})"
    )


def _pct(value: float) -> str:
    return f"{100 * value:+.0f}%"


def _r(value: float) -> float | None:
    value = float(value)
    return round(value, 6) + 0.0 if math.isfinite(value) else None  # + 0.0: no "-0.0"
