"""Budget fairness: did the new arm really improve, or did it just spend more? (four-arm design)

The design: ``old_1`` / ``new_1`` answer each task with single samples, ``old_n`` / ``new_n``
with N-way sampling (best-of-N, self-consistency, ...). Per task (tasks present in all four
arms), from :mod:`eloledger.budget.outcomes` (the count the Elo table uses too):

* **pass@1** / **pass@N** of an arm: the share of its sessions whose *submitted* answer passes
  (the run's results file, else a ``select`` row, else the single sample, else any sample --
  the oracle -- with a warning);
* **tokens**: billed tokens of ``sample``/``select`` calls, failed calls with reported usage
  included; **tokens per success** = tokens / solved sessions (tokens per solved task).

Pass rates average the per-task rates (every task weighs the same); tokens per success and
token ratios are ratios of sums. Each statistic has a paired task-level bootstrap (the same
resampled tasks for all four arms in a round) with 95% and 90% percentile intervals and a
standard error:

* ``pass1_delta`` = pass@1(new_1) - pass@1(old_1) -- the gain at n=1 (at the same budget when
  ``token_ratio_1`` is within the tolerance; the text says so only then);
* ``tokens_per_success_delta`` / ``tokens_per_success_ratio``; ``token_ratio_1``;
* ``passN_delta`` = pass@N(new_n) - pass@N(old_n), ``token_ratio_n``, ``samples_ratio_n``;
* ``matched_passk_delta`` -- the N-way arms at a **matched budget**: old_n's unbiased pass@k
  (Chen et al. 2021) at its k samples against new_n's at the real number of samples the same
  tokens buy, interpolated between whole k (``design.matched``; never rounded down);
* ``bought_delta`` = passN_delta - matched_passk_delta (the part of the N-way gain the extra
  budget buys) and ``bought_over_kept`` = bought - kept;
* ``interaction`` = passN_delta - pass1_delta.

**Decision rule** (the guide's: B over A at n=1 *and* D over C at N; ``comparisons`` in the
record gives each with its interval and whether it holds):

1. ``real_evolution`` (the guide's word; eloledger said ``real_improvement`` before) when the
   pass@1 delta's 95% interval lies above 0 with tokens per success at n=1 at most
   ``1 + tps_tolerance`` (1.10) times the old's, **and** the pass@N delta's 95% interval lies
   above 0, **and** new_n is not shown worse at the matched budget. A gain at n=1 that turns
   into a loss at N is not an evolution.
2. ``budget_leakage`` only with evidence that the N-way gain is bought: the pass@N delta's 95%
   interval above 0, new_n spent at least ``leak_ratio`` (1.5) times old_n's tokens or sample
   calls, pass@1 not shown better, and either (a) the matched-budget comparison shows it: more
   of the gain bought than kept (``bought_over_kept``'s 95% interval above 0), the matched
   change below ``design.matched_margin`` (what a ``margin`` per-sample gain gives at that
   budget; one-sided 95%) and pass@1's 95% interval below 2 x margin; or (b) the pass@1 and
   matched deltas are equivalent to 0 within ±margin (Schuirmann's two one-sided tests, 90%
   intervals). (a) has the power of the N-way samples; (b) needs many tasks at n=1. A real
   +5 pp gain on too few tasks stays ``inconclusive``.
3. ``inconclusive`` otherwise: which comparisons hold, and what the design can detect at 80%
   power, (z_.975 + z_.80) x SE, for pass@1 and for the bought share.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eloledger import __version__
from eloledger.budget.outcomes import ArmOutcome, arm_outcomes, pass_at_k
from eloledger.budget.sessions import BUDGET_ROLES
from eloledger.errors import UserError
from eloledger.rating.resample import multiplicities, percentile_interval, resample_indices

ROLES = ("old_1", "new_1", "old_n", "new_n")
TPS_TOLERANCE = 0.10
LEAK_RATIO = 1.5
PASS_THRESHOLD = 0.5
MARGIN = 0.05  # equivalence margin of "no gain", in pass-rate points (5 pp)
MDE_Z = 1.959964 + 0.841621  # z_.975 + z_.80: minimum detectable effect at 80% power
RULE = (
    "real_evolution: B over A (pass@1 delta 95% CI above 0, tokens per success at n=1 at most "
    "(1 + tps_tolerance) x old) and D over C (pass@N delta 95% CI above 0, new_n not shown "
    "worse at the matched budget); budget_leakage: pass@N delta 95% CI above 0, new_n spent >= "
    "leak_ratio x old_n's tokens or sample calls, pass@1 not shown better, and either more of "
    "the N-way gain bought than kept at the matched budget (95% CI above 0) with the matched "
    "change below matched_margin (one-sided 95%) and the pass@1 95% CI below 2 x margin, or "
    "the pass@1 and matched-budget deltas' 90% CIs inside +-margin (TOST, Schuirmann 1987); "
    "otherwise inconclusive, saying which comparison holds and what the design detects at 80% "
    "power"
)


@dataclass
class _ArmTasks:
    """Per-task sums of one arm (arrays aligned with the common task list)."""

    name: str
    attempts: np.ndarray  # sessions (one submitted answer each)
    successes: np.ndarray  # sessions whose submitted answer passes
    tokens: np.ndarray  # billed tokens
    samples: np.ndarray  # sample calls made
    n: np.ndarray  # scored samples (for the unbiased pass@k of the arm's own samples)
    c: np.ndarray  # passing samples
    k: int | None  # scored samples per session, smallest over the tasks


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
    margin: float = MARGIN,
    results: Mapping[tuple, float] | None = None,
) -> dict[str, Any]:
    """The archivable fairness record (see the module docstring for the statistics and rule).

    ``results`` maps (task, arm, session) to the pass (1.0/0.0) of the answer the arm
    submitted, from the run's results file (``budget.outcomes.read_results``).
    """
    if bootstrap < 1:
        raise UserError(f"--bootstrap {bootstrap}: must be at least 1", fix="e.g. --bootstrap 2000")
    if not (math.isfinite(margin) and 0 < margin < 1):
        raise UserError(f"--margin {margin}: must be between 0 and 1", fix="e.g. --margin 0.05")
    rows = [r for r in rows if str(r.get("role") or "sample") in BUDGET_ROLES]
    names = dict(zip(ROLES, (old_1, new_1, old_n, new_n), strict=True))
    known = sorted({str(r["arm"]) for r in rows if r.get("arm") is not None})
    missing = [f"{role}={arm!r}" for role, arm in names.items() if arm not in known]
    if missing:
        raise UserError(
            f"ledger: unknown arm(s) {', '.join(missing)}",
            fix=f"the ledger's arms are: {', '.join(known) or '(none)'}",
        )
    wanted = set(names.values())
    outcomes, warnings = arm_outcomes(
        [r for r in rows if str(r.get("arm")) in wanted], results=results,
        threshold=pass_threshold,
    )  # fmt: skip
    per_arm = {role: _task_table(outcomes[arm]) for role, arm in names.items()}
    common = sorted(set.intersection(*(set(t) for t in per_arm.values())))
    dropped = len(set.union(*(set(t) for t in per_arm.values()))) - len(common)
    if dropped:
        warnings.append(f"{dropped} task(s) not scored in all four arms were left out")
    if len(common) < 2:
        raise UserError(
            f"ledger: only {len(common)} task(s) have scored attempts in all four arms",
            fix="the paired comparison needs the same tasks (at least 2) under every arm",
        )
    arms = {role: _align(outcomes[names[role]], per_arm[role], common) for role in ROLES}
    rng = np.random.default_rng(seed)
    n_tasks = len(common)
    counts = multiplicities(resample_indices(rng, n_tasks, bootstrap), n_tasks)
    weights = np.vstack([np.ones(n_tasks), counts]).astype(float)
    stats, matched = _statistics(arms, weights)
    metrics = {name: _summary(values) for name, values in stats.items()}
    design = _design(arms, metrics, matched, n_tasks, margin)
    verdict, reason, comparisons = _decide(metrics, design, tps_tolerance, leak_ratio, margin)
    return {
        "kind": "eloledger.fairness",
        "schema": 3,
        "eloledger_version": __version__,
        "inputs": {
            **names,
            "bootstrap": int(bootstrap),
            "seed": int(seed),
            "pass_threshold": pass_threshold,
            "tps_tolerance": tps_tolerance,
            "leak_ratio": leak_ratio,
            "margin": margin,
        },
        "tasks": {"used": n_tasks, "dropped": dropped},
        "arms": {role: _arm_record(arms[role]) for role in ROLES},
        "metrics": metrics,
        "design": design,
        "verdict": verdict,
        "reason": reason,
        "comparisons": comparisons,
        "rule": RULE,
        "warnings": warnings,
    }


def _task_table(o: ArmOutcome) -> dict[str, tuple[float, ...]]:
    """task -> (sessions, solved, tokens, sample calls, scored samples, passing samples),
    for the tasks where the arm has a known outcome."""
    if not o.scored:
        return {}
    return {
        t: (
            float(m), float(o.per_task_solved.get(t, 0)), o.per_task_tokens.get(t, 0.0),
            float(o.per_task_calls.get(t, 0)), float(o.per_task_n.get(t, 0)),
            float(o.per_task_c.get(t, 0)),
        )  # fmt: skip
        for t, m in o.per_task_sessions.items()
        if m > 0
    }


def _align(o: ArmOutcome, table: Mapping[str, tuple[float, ...]], tasks: list[str]) -> _ArmTasks:
    v = np.array([table[t] for t in tasks], dtype=float)
    k = o.k if o.k is not None and all(table[t][4] >= o.k for t in tasks) else None
    return _ArmTasks(o.arm, v[:, 0], v[:, 1], v[:, 2], v[:, 3], v[:, 4], v[:, 5], k)


def _statistics(
    arms: Mapping[str, _ArmTasks], weights: np.ndarray
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Each statistic for every weight row (row 0: the data itself; the rest: bootstrap), and
    the matched-budget comparison of the N-way arms (which k each one is read at)."""
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
    stats = {
        "pass1_delta": pass1,
        "tokens_per_success_delta": tps_delta,
        "tokens_per_success_ratio": tps_ratio,
        "token_ratio_1": ratio(new1.tokens, old1.tokens),
        "passN_delta": pass_n,
        "token_ratio_n": ratio(newn.tokens, oldn.tokens),
        "samples_ratio_n": ratio(newn.samples, oldn.samples),
        "interaction": pass_n - pass1,
    }
    matched = _matched_k(oldn, newn)
    if matched["k_new"] is not None:
        kept = _matched_delta(oldn, newn, int(matched["k_old"]), weights, total)
        stats["matched_passk_delta"] = kept
        stats["bought_delta"] = pass_n - kept
        stats["bought_over_kept"] = pass_n - 2.0 * kept
    return stats, matched


def _pass_table(arm: _ArmTasks, k_max: int) -> np.ndarray:
    """tasks x (k_max + 2): column j is the unbiased pass@j (Chen et al. 2021) of each task's
    own samples; column 0 is 0 (no sample, no pass) and the last repeats pass@k_max."""
    table = np.zeros((len(arm.n), k_max + 2))
    for j in range(1, k_max + 1):
        table[:, j] = [pass_at_k(int(n), int(c), j) for n, c in zip(arm.n, arm.c, strict=True)]
    table[:, k_max + 1] = table[:, k_max]
    return table


def _matched_delta(
    old: _ArmTasks, new: _ArmTasks, k_old: int, weights: np.ndarray, total: np.ndarray
) -> np.ndarray:
    """pass@k_old of old_n's samples against new_n's pass at the same budget, per weight row.

    The budget is k_old x old's tokens per sample; new_n affords x = budget / its tokens per
    sample, a real number. pass@x between whole k and k + 1 is the linear interpolation of the
    unbiased pass@k and pass@(k+1): the pass rate of a session that draws k + 1 samples with
    probability x - k and k otherwise, whose expected cost is exactly the budget (no silent
    round-down: a 1,001-token sample against a 1,000-token one is read at k = 3.996, not 3).
    Each bootstrap row recomputes x from its own resampled tokens, so the interval carries the
    uncertainty of the cost ratio too."""
    k_max = int(new.k or 1)
    per_old = (weights @ old.tokens) / np.maximum(weights @ old.samples, 1e-12)
    per_new = (weights @ new.tokens) / np.maximum(weights @ new.samples, 1e-12)
    x = np.clip(k_old * per_old / np.maximum(per_new, 1e-12), 1.0, float(k_max))
    whole = np.floor(x).astype(int)
    frac = (x - whole)[:, None]
    table = _pass_table(new, k_max).T  # (k_max + 2) x tasks
    values = (1.0 - frac) * table[whole] + frac * table[whole + 1]
    new_rate = (weights * values).sum(1) / total
    old_rate = weights @ _pass_table(old, k_old)[:, k_old] / total
    return new_rate - old_rate


def _matched_k(old: _ArmTasks, new: _ArmTasks) -> dict[str, Any]:
    """The budget of the matched comparison: old_n's k samples at its tokens per sample, and
    the real number of new_n's samples that budget buys (``k_new``, read by interpolation,
    see :func:`_matched_delta`), capped at the samples new_n has (``capped``)."""
    out: dict[str, Any] = {"k_old": old.k, "k_new": None, "basis": "tokens"}
    if old.k is None or new.k is None or old.samples.sum() <= 0 or new.samples.sum() <= 0:
        out["note"] = "no per-sample scores in both N-way arms: no matched-budget comparison"
        return out
    per_old = old.tokens.sum() / old.samples.sum()
    per_new = new.tokens.sum() / new.samples.sum()
    x = old.k * per_old / per_new if per_new > 0 else float(new.k)
    out["budget_tokens"] = _r(old.k * per_old)
    if x < 1.0 - 1e-9:
        out["note"] = "one sample of the new arm costs more than the old arm's whole session"
        return out
    out["k_new"] = _r(min(x, float(new.k)))
    out["capped"] = bool(x > new.k + 1e-9)
    if out["capped"]:
        out["note"] = (
            f"new_n has only {new.k} samples a session, fewer than the {x:.2f} the budget buys: "
            "it is read at all of them (below the matched budget)"
        )
    return out


def _summary(values: np.ndarray) -> dict[str, float | None]:
    """Point estimate (row 0), the 95% and 90% percentile intervals and the standard error
    of the bootstrap rows (the 90% interval is the two one-sided tests' at 5% each)."""
    point, boot = float(values[0]), values[1:]
    finite = boot[np.isfinite(boot)]
    if len(finite) < max(1, 0.9 * len(boot)):  # too many rounds without successes: no interval
        low = high = low90 = high90 = se = math.nan
    else:
        low, high = (float(v) for v in percentile_interval(finite, 95.0))
        low90, high90 = (float(v) for v in percentile_interval(finite, 90.0))
        se = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    return {
        "estimate": _r(point), "ci_low": _r(low), "ci_high": _r(high),
        "ci90_low": _r(low90), "ci90_high": _r(high90), "se": _r(se),
    }  # fmt: skip


def _matched_margin(old: _ArmTasks, matched: Mapping[str, Any], margin: float) -> float | None:
    """The margin at the matched budget: the pass@k gain a per-sample gain of ``margin`` would
    give there, mean over tasks of (1 - a)^k - (1 - a - margin)^k with a = old_n's per-task
    sample pass rate and k its samples per session. "No gain per sample beyond the margin"
    then reads the same at n=1 and at the matched budget."""
    k = matched.get("k_old")
    if matched.get("k_new") is None or not k or not (old.n > 0).all():
        return None
    a = old.c / old.n
    return _r(float(np.mean((1.0 - a) ** k - np.clip(1.0 - a - margin, 0.0, 1.0) ** k)))


def _design(
    arms: Mapping[str, _ArmTasks],
    metrics: Mapping[str, Mapping[str, float | None]],
    matched: Mapping[str, Any],
    n_tasks: int,
    margin: float = MARGIN,
) -> dict[str, Any]:
    """What the data can detect: attempts per task at n=1, the minimum detectable pass@1 change
    at 80% power (two-sided 5%: (z_.975 + z_.80) x SE), the same for the matched-budget
    comparison and for the bought share of the N-way gain, and the matched-budget reading."""
    ratio1 = metrics["token_ratio_1"]["estimate"]
    per_task = float(np.mean([arms["old_1"].attempts.mean(), arms["new_1"].attempts.mean()]))
    same = ratio1 is not None and 1 / (1 + TPS_TOLERANCE) <= ratio1 <= 1 + TPS_TOLERANCE

    def mde(name: str) -> float | None:
        se = metrics.get(name, {}).get("se")
        return _r(MDE_Z * se) if se is not None else None

    return {
        "tasks": n_tasks,
        "matched_margin": _matched_margin(arms["old_n"], matched, margin),
        "attempts_per_task_1": _r(per_task),
        "mde_pass1": mde("pass1_delta"),
        "mde_matched": mde("matched_passk_delta"),
        "mde_bought": mde("bought_over_kept"),
        "power": 0.8,
        "same_budget_1": bool(same),
        "matched": dict(matched),
    }


def _above(metric: Mapping[str, float | None] | None) -> bool:
    return metric is not None and metric.get("ci_low") is not None and metric["ci_low"] > 0


def _below(metric: Mapping[str, float | None] | None) -> bool:
    return metric is not None and metric.get("ci_high") is not None and metric["ci_high"] < 0


def _comparisons(
    metrics: Mapping[str, Mapping[str, float | None]], design: Mapping[str, Any], tol: float
) -> dict[str, dict[str, Any]]:
    """The guide's two comparisons and the matched budget, each with its interval and whether
    it holds: B over A (new_1 over old_1 at n=1, within the tokens-per-success tolerance), D
    over C (new_n over old_n at N) and D over C at old_n's budget."""
    p1, pn = metrics["pass1_delta"], metrics["passN_delta"]
    tps = metrics["tokens_per_success_ratio"]["estimate"]
    tps_ok = tps is not None and tps <= 1.0 + tol
    out: dict[str, dict[str, Any]] = {
        "n1": {
            "what": "B over A: new_1 against old_1 at n=1 (pass@1)",
            **_interval(p1),
            "tokens_per_success_ratio": tps,
            "within_tolerance": bool(tps_ok),
            "holds": _above(p1) and tps_ok,
            "worse": _below(p1),
        },
        "n_way": {
            "what": "D over C: new_n against old_n at N (pass@N)",
            **_interval(pn),
            "token_ratio": metrics["token_ratio_n"]["estimate"],
            "holds": _above(pn),
            "worse": _below(pn),
        },
    }
    mk = metrics.get("matched_passk_delta")
    matched = design["matched"]
    out["matched_budget"] = {
        "what": "D over C at old_n's budget (unbiased pass@k of each arm's own samples)",
        **(_interval(mk) if mk is not None else {"estimate": None, "ci95": [None, None]}),
        "k_old": matched.get("k_old"),
        "k_new": matched.get("k_new"),
        "holds": _above(mk),
        "worse": _below(mk),
        **({"note": matched["note"]} if matched.get("note") else {}),
    }
    return out


def _interval(metric: Mapping[str, float | None]) -> dict[str, Any]:
    return {"estimate": metric["estimate"], "ci95": [metric["ci_low"], metric["ci_high"]]}


def _decide(
    metrics: Mapping[str, Mapping[str, float | None]],
    design: Mapping[str, Any],
    tol: float,
    leak: float,
    margin: float,
) -> tuple[str, str, dict[str, Any]]:
    """The verdict, its reason (which comparisons hold) and the comparisons themselves."""
    comp: dict[str, Any] = _comparisons(metrics, design, tol)
    n1, nway, kept = comp["n1"], comp["n_way"], comp["matched_budget"]
    p1, pn = metrics["pass1_delta"], metrics["passN_delta"]
    mk = metrics.get("matched_passk_delta")
    tps = metrics["tokens_per_success_ratio"]["estimate"]
    tokens = metrics["token_ratio_n"]["estimate"] or 0.0
    samples = metrics["samples_ratio_n"]["estimate"] or 0.0
    ratio1 = metrics["token_ratio_1"]["estimate"] or 0.0
    where = (
        "at the same budget"
        if design["same_budget_1"]
        else f"at n=1 (new_1 spends {ratio1:.2f}x old_1's tokens)"
    )
    p1_text = f"{_pp(p1)} {where}"
    power = _power_text(design)
    band = f"±{100 * margin:.0f} pp"
    matched = design["matched"]
    at_k = (
        f"pass@{_k(matched['k_new'])} of new_n's samples against pass@{matched['k_old']} of "
        f"old_n's, {matched.get('budget_tokens') or 0:.0f} tokens"
    )
    kept_text = (
        f"at the matched budget ({at_k}) {_pp(mk)}"
        if mk is not None
        else f"no matched-budget comparison ({matched.get('note', 'no per-sample scores')})"
    )
    # D over C: shown at N or at old_n's own budget (where new_n gets no more tokens than
    # old_n), and shown worse at neither.
    d_over_c = (nway["holds"] or kept["holds"]) and not (nway["worse"] or kept["worse"])
    holds = (
        f"B over A (n=1) {'holds' if n1['holds'] else 'does not hold'}; D over C (N, or at the "
        f"matched budget) {'holds' if d_over_c else 'does not hold'}"
    )
    comp["holds"] = {"b_over_a": bool(n1["holds"]), "d_over_c": bool(d_over_c)}
    if n1["holds"] and d_over_c:
        return "real_evolution", (
            f"both hold: pass@1 improves by {p1_text}, tokens per success change by "
            f"{_pct((tps or 1.0) - 1.0)} (within the {tol:.0%} tolerance); pass@N changes by "
            f"{_pp(pn)}; {kept_text}."
        ), comp
    spent_more = tokens >= leak or samples >= leak
    equal1 = _equivalent(p1, margin)
    bought = metrics.get("bought_delta")
    # "Nothing gained at a matched budget", shown: the matched change's one-sided 95% bound
    # (the 90% interval's upper end) below the margin, and more of the N-way gain bought than
    # kept there (the bought minus the kept part has a 95% interval above 0).
    edge = design.get("matched_margin")
    top = mk.get("ci90_high") if mk is not None else None
    small = edge is not None and top is not None and top < edge
    # n=1 must not point the other way: its 95% interval rules out a gain of twice the margin
    # (200 tasks x 1 sample cannot show equivalence within the margin itself).
    n1_small = p1.get("ci_high") is not None and p1["ci_high"] < 2 * margin
    majority = _above(metrics.get("bought_over_kept")) and small and n1_small
    equal_both = equal1 and (mk is None or _equivalent(mk, margin))
    if nway["holds"] and spent_more and not _above(p1) and (majority or equal_both):
        why = (
            f"{_pp(bought or {})} of it is bought with tokens, more than the part kept at the "
            f"matched budget (the bought minus the kept part has a 95% CI above 0)"
            if majority
            else f"pass@1 and the matched-budget change are both equivalent to no gain within "
            f"{band} (two one-sided tests, 5% each)"
        )
        return "budget_leakage", (
            f"pass@N improves by {_pp(pn)} only while the new N-way arm spends {tokens:.2f}x the "
            f"tokens ({samples:.2f}x the samples) of the old one; {kept_text}, so {why}; "
            f"pass@1 changes by {p1_text}."
        ), comp
    if n1["holds"]:
        return "inconclusive", (
            f"{holds}: pass@1 improves by {p1_text}, but pass@N changes by {_pp(pn)} and "
            f"{kept_text}; a real evolution needs both."
        ), comp
    if _above(p1):
        shown = "an unknown amount more" if tps is None else f"{_pct(tps - 1.0)}"
        return "inconclusive", (
            f"{holds}: pass@1 improves by {p1_text} but tokens per success change by {shown}, "
            f"beyond the {tol:.0%} tolerance; pass@N changes by {_pp(pn)}."
        ), comp
    if _below(p1):
        return "inconclusive", f"the new arm is worse: pass@1 changes by {p1_text}.", comp
    detect = design.get("mde_bought")
    lacking = (
        f"the matched-budget comparison shows a bought majority only when the bought minus the "
        f"kept part exceeds {100 * detect:.0f} pp (80% power)"
        if mk is not None and detect is not None
        else "without a matched-budget comparison only n=1 equivalence within "
        f"{band} could show leakage; {power}"
    )
    if nway["holds"] and spent_more:
        return "inconclusive", (
            f"pass@N improves by {_pp(pn)} while the new N-way arm spends {tokens:.2f}x the "
            f"tokens, but {kept_text} and pass@1 changes by {p1_text}: neither a bought gain nor "
            f"a gain per sample is shown; {lacking}."
        ), comp
    if nway["holds"]:
        return "inconclusive", (
            f"{holds}: pass@N improves by {_pp(pn)} at a similar cost ({tokens:.2f}x tokens), "
            f"but pass@1 changes by {p1_text}, so the gain is not established per sample; "
            f"{power}."
        ), comp
    leak_power = f"; new_n spends {tokens:.2f}x the tokens and {lacking}" if spent_more else ""
    return "inconclusive", (
        f"neither pass@1 ({p1_text}) nor pass@N ({_pp(pn)}) shows a gain whose interval "
        f"excludes zero; {power}{leak_power}."
    ), comp


def _k(value: Any) -> str:
    return "?" if value is None else f"{round(float(value), 2):g}"


def _equivalent(metric: Mapping[str, float | None], margin: float) -> bool:
    """Schuirmann's (1987) two one-sided tests at 5% each: the 90% interval inside ±margin."""
    lo, hi = metric.get("ci90_low"), metric.get("ci90_high")
    return lo is not None and hi is not None and -margin < lo and hi < margin


def _power_text(design: Mapping[str, Any]) -> str:
    """'100 tasks x 1 sample detect a pass@1 change of 15 pp at 80% power'."""
    mde = design["mde_pass1"]
    per = design["attempts_per_task_1"] or 0
    unit = "sample" if per == 1 else "samples"
    if mde is None:
        return "too few tasks to say what this design can detect"
    return (
        f"{design['tasks']} tasks x {per:g} {unit} detect a pass@1 change of "
        f"{100 * mde:.0f} pp at 80% power"
    )


def _arm_record(arm: _ArmTasks) -> dict[str, Any]:
    successes, tokens = float(arm.successes.sum()), float(arm.tokens.sum())
    return {
        "name": arm.name,
        "attempts": int(arm.attempts.sum()),
        "successes": _r(successes),
        "pass_rate": _r(float(np.mean(arm.successes / arm.attempts))),
        "sample_accuracy": _r(float(np.mean(arm.c[arm.n > 0] / arm.n[arm.n > 0])))
        if (arm.n > 0).any()
        else None,
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
