"""The Elo-per-token table: one record per player, with token columns when costs are known.

Which numbers and why:

* ``elo`` / ``ci_low`` / ``ci_high`` / ``rank_low`` / ``rank_high`` — the Bradley–Terry fit
  anchored at 1000 and its intervals by task: the cluster-robust sandwich (``rating.sandwich``,
  about one more fit) or the exact task bootstrap.
* ``lc_elo`` / ``lc_ci_low`` / ``lc_ci_high`` (with ``length_control``) — the same players at
  equal answer length (``rating.length``); the report's ``length_coef`` is β in Elo points.
* ``delta_elo`` and ``delta_elo_per_1k`` — gain over the anchor, and per 1,000 extra tokens per
  task over the anchor's tokens.
* ``marginal_elo_per_1k`` — the price of the *next* step: arms sorted by tokens, differences
  between consecutive arms on the upper convex hull of (tokens, Elo). An arm below that hull
  is ``dominated``: mixing its two hull neighbours buys at least as much Elo for the same
  tokens, so it gets no marginal value.
* ``elo_per_decade`` — Elo gained per tenfold tokens over the anchor. Best-of-k gains 400 per
  decade only for continuous, tie-free scores; ``passfail_reference_elo_per_decade`` (JSON) is
  what best-of-k of the arm's own pass/fail samples can gain per decade of samples, the
  reference when the comparisons come from pass/fail scores (``budget.reference``:
  an oracle best-of-8 on pass/fail tasks reads ~170, not 400, and is still ideal).
* ``raw_elo_per_1k`` — Elo / (tokens/1000), the ratio popular guides print. It is only shown
  for comparison: it depends on the arbitrary 1000 anchor (shift every Elo by 100 and it
  changes), so do not rank arms by it.
* ``pass_at_1`` -- the share of sessions whose *submitted* answer passes (mean over tasks),
  ``tokens_per_success`` -- billed tokens / solved sessions (tokens per solved task, a ratio of
  sums), ``solved`` / ``sessions``; ``sample_accuracy`` -- the share of scored samples that
  pass, and ``pass_at_k`` -- the unbiased estimator of Chen et al. (2021) over the samples,
  with ``k`` (``pass_k``) = scored samples per session, the smallest over the arm's tasks.
  All three average over the same tasks (every task the arm ran): a task whose calls all
  failed counts 0 in each.
  A best-of-8 arm is charged its eight samples per solved task (``budget.outcomes``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eloledger.budget.outcomes import pass_at_k
from eloledger.budget.reference import best_of_k_gains
from eloledger.errors import CodedWarning
from eloledger.rating.bootstrap import bootstrap as run_bootstrap
from eloledger.rating.bt import aggregate, fit_bt, to_elo
from eloledger.rating.identify import Identification, identify, task_games
from eloledger.rating.length import length_controlled
from eloledger.rating.resample import quantile_interval
from eloledger.rating.sandwich import bt_sandwich

INTERVALS = ("sandwich", "bootstrap", "none")


@dataclass(frozen=True)
class EloReport:
    """What ``eloledger elo`` prints and the TUI shows: records sorted by Elo, best first."""

    players: list[dict[str, Any]]
    anchor: str
    warnings: list[str] = field(default_factory=list)
    bootstrap_rounds: int = 0
    level: float = 0.95
    has_costs: bool = False
    task_weight: str = "none"
    prior: float = 0.0
    intervals: str = "bootstrap"
    length_coef: dict[str, Any] | None = None  # β in Elo points, with --length-control
    arms_compared: int = 0  # players other than the anchor: the family of intervals
    simultaneous: bool = False  # Bonferroni over arms_compared (per_interval_level)
    per_interval_level: float = 0.95

    def multiplicity_note(self) -> str:
        """How many arms were compared and what that does to "significant" (one line)."""
        m = self.arms_compared
        if self.intervals == "none" or m < 1:
            return f"{m} arm(s) compared with the anchor"
        if self.simultaneous:
            return (f"{m} arm(s) compared with the anchor; the intervals hold for all of them "
                    f"together ({self.level:.0%} family-wise, Bonferroni: each at "
                    f"{self.per_interval_level:.2%})")  # fmt: skip
        return (f"{m} arm(s) compared with the anchor; each interval is {self.level:.0%} on its "
                f"own, so with {m} equal arms up to {1 - self.level ** m:.0%} of runs show one "
                "apart from the anchor by chance (--simultaneous: intervals that hold together)")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out = {
            "players": self.players,
            "anchor": self.anchor,
            "warnings": self.warnings,
            "intervals": {"method": self.intervals, "unit": "task", "level": self.level,
                          "arms_compared": self.arms_compared,
                          "simultaneous": self.simultaneous,
                          "per_interval_level": self.per_interval_level},  # fmt: skip
            "bootstrap": {"rounds": self.bootstrap_rounds, "unit": "task", "level": self.level},
            "task_weight": self.task_weight,
            "prior": self.prior,
        }
        if self.length_coef is not None:
            out["length_coef"] = self.length_coef
        return out


def elo_report(
    comparisons,
    *,
    costs: Mapping[str, Any] | None = None,
    anchor: str | None = None,
    bootstrap_rounds: int = 1000,
    seed: int | None = 0,
    prior: float = 0.0,
    task_weight: str | None = None,
    level: float = 0.95,
    intervals: str = "bootstrap",
    length_control: bool = False,
    simultaneous: bool = False,
) -> EloReport:
    """Fit, give intervals by task and build the table records (the one function both faces
    call). ``intervals``: "sandwich" (cluster-robust, about one more fit), "bootstrap"
    (``bootstrap_rounds`` task-bootstrap rounds; 0 rounds = none) or "none".
    ``length_control`` adds ``lc_elo`` with its interval and ``length_coef`` (needs
    a_tokens/b_tokens in the comparisons). ``simultaneous``: every interval at level
    1 - (1 - level) / m, m = players other than the anchor (Bonferroni), so that all m hold
    together with probability >= level; with 8 or 16 equal arms, 95% intervals one at a time
    showed one "apart" from the anchor in 24% / 39% of runs (bench/study_intervals.py).

    ``costs`` maps arm name -> an ArmOutcome-like object or mapping (``tokens_per_task``,
    ``total_tokens``, ``per_task_sessions``, ``per_task_solved``, ``per_task_n``,
    ``per_task_c``, ``k``; see ``eloledger.budget.outcomes.ledger_outcomes``).
    Anchor default: the cheapest arm with known tokens, else the first player.
    """
    names = list(comparisons.players)
    warnings: list[str] = []
    if comparisons.dropped_self:
        warnings.append(
            f"dropped {comparisons.dropped_self} comparisons of a player with itself "
            "(they carry no information)"
        )
    tokens = _tokens(names, costs) if costs else np.full(len(names), np.nan)
    if costs:
        warnings.extend(_cost_mismatch(names, costs, tokens))
        warnings.extend(_unjudged_tasks(comparisons, costs))
    if anchor is not None:
        a = comparisons.player_index(anchor)
    elif np.isfinite(tokens).any():
        a = int(np.nanargmin(tokens))
    else:
        a = 0
    if intervals not in INTERVALS:
        raise ValueError(f"intervals must be one of {INTERVALS}, not {intervals!r}")
    arms_compared = max(len(names) - 1, 0)
    family_level = level
    if simultaneous and arms_compared > 1:
        level = 1.0 - (1.0 - level) / arms_compared
    W = aggregate(comparisons, task_weight=task_weight)
    fit = fit_bt(W, prior=prior, players=names)
    warnings.extend(fit.warnings)
    elo = to_elo(fit.theta, a)
    n = len(names)
    lo = hi = np.full(n, np.nan)
    draws: np.ndarray | None = None  # Elo draws (sandwich normal draws or bootstrap rounds)
    rlo: Sequence[Any] = [None] * n
    rhi: Sequence[Any] = [None] * n
    if intervals == "sandwich":
        sand = bt_sandwich(
            comparisons, fit.theta, prior=fit.prior, anchor=a, task_weight=task_weight,
            level=level, seed=seed, W=W,
        )  # fmt: skip
        lo, hi, rlo, rhi = (
            sand.ci_low,
            sand.ci_high,
            sand.rank_low.tolist(),
            sand.rank_high.tolist(),
        )
        draws = sand.elo_samples
    elif intervals == "bootstrap" and bootstrap_rounds > 0:
        boot = run_bootstrap(
            comparisons,
            rounds=bootstrap_rounds,
            seed=seed,
            prior=fit.prior,
            anchor=a,
            task_weight=task_weight,
            level=level,
            theta0=fit.theta,
        )
        lo, hi, rlo, rhi = (
            boot.ci_low,
            boot.ci_high,
            boot.rank_low.tolist(),
            boot.rank_high.tolist(),
        )
        draws = boot.elo_samples
        warnings.extend(boot.warnings)
    ident = None
    if not fit.mle_exists and prior == 0.0:
        ident = identify(W, fit.theta, a, level, games=task_games(comparisons))
    if ident is not None:
        elo, lo, hi, rlo, rhi = _apply_identification(ident, elo, lo, hi, rlo, rhi, names, warnings)
        tokens = np.where([st != "yes" for st in ident.status], np.nan, tokens)
    rank = 1 + (elo[None, :] > elo[:, None]).sum(1)
    if ident is not None:  # a never-loser (no point Elo) still ranks above the anchor's group
        rank = rank + sum(st == "lower_bound" for st in ident.status)
    games, wins = comparisons.games(), comparisons.wins()
    records: list[dict[str, Any]] = []
    for k, name in enumerate(names):
        known = math.isfinite(elo[k])
        records.append(
            {
                "name": name,
                "elo": float(elo[k]) if known else None,
                "ci_low": float(lo[k]),
                "ci_high": float(hi[k]),
                "rank": int(rank[k]) if known else None,
                "rank_low": rlo[k],
                "rank_high": rhi[k],
                "games": int(games[k]),
                "wins": float(wins[k]),
            }
        )
        if ident is not None:
            records[-1]["identified"] = ident.status[k]
            if ident.status[k] == "no":
                records[-1]["group"] = names[ident.group[k]]
                records[-1]["group_elo"] = float(ident.group_elo[k])
    length_coef = None
    if length_control:
        lc = length_controlled(
            comparisons, anchor=a, prior=prior, task_weight=task_weight, level=level, seed=seed
        )
        warnings.extend(lc.warnings)
        length_coef = lc.length_coef()
        for k, rec in enumerate(records):
            rec["lc_elo"] = float(lc.lc_elo[k])
            rec["lc_ci_low"] = float(lc.lc.ci_low[k])
            rec["lc_ci_high"] = float(lc.lc.ci_high[k])
    has_costs = bool(costs)
    if has_costs:
        joint = None
        if draws is not None:  # Elo and tokens drawn together, task by task
            joint = joint_cost_draws(
                comparisons, fit.theta, fit.prior, W, a, names, costs, tokens,
                level=level, seed=seed, task_weight=task_weight,
            )  # fmt: skip
        extra = cost_columns(elo, tokens, a, draws=draws, level=level, joint=joint)
        for k, rec in enumerate(records):
            rec.update(extra[k])
            rec.update(_pass_columns(costs.get(names[k]), tokens[k]))
    # players without a point Elo: listed at their one-sided bound, unidentified ones last
    bound = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), hi, -np.inf))
    order = np.argsort(-np.where(np.isfinite(elo), elo, bound), kind="stable")
    return EloReport(
        players=[records[k] for k in order],
        anchor=names[a],
        warnings=warnings,
        bootstrap_rounds=bootstrap_rounds if intervals == "bootstrap" else 0,
        level=family_level,
        has_costs=has_costs,
        task_weight=task_weight or "none",
        prior=fit.prior,
        intervals=intervals if intervals != "bootstrap" or bootstrap_rounds > 0 else "none",
        length_coef=length_coef,
        arms_compared=arms_compared,
        simultaneous=bool(simultaneous),
        per_interval_level=level,
    )


def _apply_identification(
    ident: Identification,
    elo: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    rlo: Sequence[Any],
    rhi: Sequence[Any],
    names: Sequence[str],
    warnings: list[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any], list[Any]]:
    """Replace what the fallback prior made up (``rating.identify``): one-sided bounds for
    players above / below the anchor's group, no Elo for players it cannot reach, and rank
    intervals widened by the players whose place is unknown."""
    n = len(names)
    elo, lo, hi = elo.copy(), lo.copy(), hi.copy()
    rlo, rhi = list(rlo), list(rhi)
    unknown = ident.unidentified
    for k, status in enumerate(ident.status):
        if status == "yes":
            if unknown and rlo[k] is not None:
                rlo[k], rhi[k] = max(1, rlo[k] - unknown), min(n, rhi[k] + unknown)
        elif status == "lower_bound":  # the point Elo would be the prior number: withheld
            elo[k], lo[k], hi[k], rlo[k] = math.nan, ident.ci_low[k], math.inf, 1
        elif status == "upper_bound":
            elo[k], lo[k], hi[k], rhi[k] = math.nan, -math.inf, ident.ci_high[k], n
        else:
            elo[k], lo[k], hi[k], rlo[k], rhi[k] = math.nan, -math.inf, math.inf, 1, n
    bounded = [names[k] for k, st in enumerate(ident.status) if st.endswith("_bound")]
    lost = [names[k] for k, st in enumerate(ident.status) if st == "no"]
    if bounded:
        warnings.append(
            f"{', '.join(bounded)}: never lose (or never win) against the anchor's group, so "
            "the data give only a one-sided bound, counted by task (the other end is "
            "infinite); no point Elo (it would be the fallback prior number), no Elo per token"
        )
    if lost:
        warnings.append(
            f"{', '.join(lost)}: not connected to the anchor's group, so their Elo against "
            "the anchor is not identified (left empty); group_elo rates them within their own "
            "group, and every rank interval allows for them"
        )
    return elo, lo, hi, rlo, rhi


JOINT_DRAWS = 2000  # joint (Elo, tokens) draws behind the Elo-per-token intervals


def joint_cost_draws(
    comparisons,
    theta: np.ndarray,
    prior: float,
    W: np.ndarray,
    anchor: int,
    names: Sequence[str],
    costs: Mapping[str, Any],
    tokens: np.ndarray,
    *,
    level: float,
    seed: int | None,
    task_weight: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(Elo draws, tokens-per-task draws), rows x players, drawn together by task.

    Each task moves every arm's Elo (its influence on the fit, ``sandwich.task_influence``)
    and every arm's mean tokens per task (``(τ_at - τ̄_a) / tasks_a``) at once; one N(0, 1)
    weight per task draws both, so an arm's tokens and its Elo keep their covariance (hard
    tasks cost more and are lost more). Widened like the sandwich: sqrt(T/(T-1)) and the t
    quantile with T - 1 degrees of freedom. Holding tokens fixed, the ΔElo/1K intervals of
    arms within 1-1.5x of each other's tokens covered 0.70-0.81 (bench/study_intervals.py)."""
    from scipy.special import ndtri, stdtrit

    from eloledger.rating.bt import ELO_SCALE
    from eloledger.rating.sandwich import task_influence

    psi = task_influence(comparisons, theta, prior=prior, W=W, task_weight=task_weight)
    groups = psi.shape[0]  # tasks, or task groups (index mod groups) for very many tasks
    row = {t: k % groups for k, t in enumerate(comparisons.tasks)}
    n = len(names)
    spend: list[tuple[str, int, float]] = []  # (task, arm, its pull on the arm's mean tokens)
    for k, name in enumerate(names):
        cost = costs.get(name)
        per_tokens = _field(cost, "per_task_tokens") if cost is not None else None
        per_sessions = _field(cost, "per_task_sessions") if cost is not None else None
        if not per_tokens or not per_sessions or not math.isfinite(tokens[k]):
            continue  # no per-task tokens: this arm's tokens stay fixed
        ran = [t for t in per_tokens if per_sessions.get(t)]
        values = np.array([per_tokens[t] / per_sessions[t] for t in ran])
        spend.extend((t, k, float(v) / len(ran)) for t, v in zip(ran, values - values.mean(),
                                                                 strict=True))  # fmt: skip
    for t, _, _ in spend:  # tasks an arm ran without a comparison: tokens only
        row.setdefault(t, groups + len(row) - len(comparisons.tasks))
    total = max(groups, max(row.values(), default=0) + 1)
    tok = np.zeros((total, n))
    for t, k, v in spend:
        tok[row[t], k] += v
    th = np.zeros((total, n))
    th[:groups] = psi
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((JOINT_DRAWS, total))
    used = max(int(np.count_nonzero(np.abs(th).sum(1) + np.abs(tok).sum(1))), 2)
    q = float(stdtrit(used - 1, 0.5 + level / 2.0)) / float(ndtri(0.5 + level / 2.0))
    scale = q * math.sqrt(used / (used - 1.0))
    d_theta = (z @ th) * scale
    elo = ELO_SCALE * (d_theta - d_theta[:, anchor : anchor + 1]) + to_elo(theta, anchor)
    return elo, tokens + (z @ tok) * scale


def cost_columns(
    elo: np.ndarray,
    tokens: np.ndarray,
    anchor: int,
    *,
    draws: np.ndarray | None = None,
    level: float = 0.95,
    joint: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """Token columns per player (NaN tokens -> None in every token column); with ``draws``
    (Elo draws, rows x players) also their intervals and the frontier share; with ``joint``
    (Elo draws, token draws) the intervals carry the tokens' uncertainty too."""
    t0, e0 = tokens[anchor], elo[anchor]
    marginal, dominated = marginal_frontier(tokens, elo)
    spread = None
    if joint is not None:
        spread = _cost_uncertainty(elo, tokens, anchor, joint[0], level, joint[1])
    elif draws is not None:
        spread = _cost_uncertainty(elo, tokens, anchor, draws, level)
    out = []
    for k in range(len(elo)):
        t, e = tokens[k], elo[k]
        known = math.isfinite(t) and math.isfinite(t0)
        dt = t - t0 if known else math.nan
        delta = float(e - e0)
        out.append(
            {
                "tokens_per_task": float(t) if math.isfinite(t) else None,
                "delta_elo": delta,
                "delta_elo_per_1k": delta / (dt / 1000.0) if known and dt != 0 else None,
                "marginal_elo_per_1k": marginal[k],
                "dominated": dominated[k],
                "elo_per_decade": delta / math.log10(t / t0)
                if known and t > 0 and t0 > 0 and t != t0
                else None,
                "raw_elo_per_1k": float(e / (t / 1000.0)) if math.isfinite(t) and t > 0 else None,
            }
        )
        if spread is not None:
            out[-1].update(spread[k])
    return out


MAX_FRONTIER_DRAWS = 400  # draws that recompute the frontier (a Python loop over arms)


def _cost_uncertainty(
    elo: np.ndarray,
    tokens: np.ndarray,
    anchor: int,
    draws: np.ndarray,
    level: float,
    token_draws: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """Intervals of ΔElo per 1K and of the marginal step, and the frontier share.

    The Elo draws carry the task-clustered uncertainty; with ``token_draws`` (drawn jointly,
    :func:`joint_cost_draws`) each draw's ratio uses that draw's tokens, so the intervals
    carry the tokens' sampling error and its covariance with Elo; without them tokens are
    held at their measured values. ``frontier_share``: the share of draws in which the arm
    is on the upper convex hull (``dominated`` is only the point estimate's reading).
    """
    if token_draws is None:
        token_draws = np.broadcast_to(tokens, draws.shape)
    n = len(elo)
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    known = np.isfinite(tokens) & np.isfinite(elo)
    if not known[anchor] or not len(draws):
        return out
    on = np.zeros(n)
    sub = draws[: MAX_FRONTIER_DRAWS]
    for row, spent in zip(sub, token_draws, strict=False):
        _, dom = marginal_frontier(np.where(known, spent, np.nan), row)
        on += np.array([d is False for d in dom], dtype=float)
    frontier = _frontier_order(tokens, elo)
    previous = dict(zip(frontier[1:], frontier[:-1], strict=False))

    def quantiles(values: np.ndarray) -> tuple[float, float]:
        lo, hi = quantile_interval(values, level)
        return float(lo), float(hi)

    for k in range(n):
        if not known[k]:
            continue
        rec: dict[str, Any] = {"frontier_share": float(on[k] / len(sub))}
        if tokens[k] != tokens[anchor]:
            dt = token_draws[:, k] - token_draws[:, anchor]
            lo, hi = quantiles((draws[:, k] - draws[:, anchor]) / (dt / 1000.0))
            rec["delta_elo_per_1k_low"], rec["delta_elo_per_1k_high"] = lo, hi
        if k in previous:
            p = previous[k]
            dt = token_draws[:, k] - token_draws[:, p]
            lo, hi = quantiles((draws[:, k] - draws[:, p]) / (dt / 1000.0))
            rec["marginal_elo_per_1k_low"], rec["marginal_elo_per_1k_high"] = lo, hi
        out[k] = rec
    return out


def marginal_frontier(
    tokens: np.ndarray, elo: np.ndarray
) -> tuple[list[float | None], list[bool | None]]:
    """Marginal Elo per 1K tokens along the upper convex hull of (tokens, Elo).

    Arms are taken cheapest first; the hull keeps the arms no mix of two others beats.
    The cheapest hull arm has no marginal value (None); arms below the hull, or past the
    hull's highest Elo (more tokens for less Elo), are dominated (None, True). Arms with
    unknown tokens get (None, None).
    """
    n = len(elo)
    marginal: list[float | None] = [None] * n
    dominated: list[bool | None] = [None] * n
    known = [k for k in range(n) if math.isfinite(tokens[k])]
    frontier = _frontier_order(tokens, elo)
    on = set(frontier)
    for k in known:
        dominated[k] = k not in on
    for prev, k in zip(frontier, frontier[1:], strict=False):
        marginal[k] = float((elo[k] - elo[prev]) / ((tokens[k] - tokens[prev]) / 1000.0))
    return marginal, dominated


def _frontier_order(tokens: np.ndarray, elo: np.ndarray) -> list[int]:
    """The arms on the rising part of the upper convex hull of (tokens, Elo), cheapest first."""
    known = [k for k in range(len(elo)) if math.isfinite(tokens[k]) and math.isfinite(elo[k])]
    known.sort(key=lambda k: (tokens[k], -elo[k], k))
    hull: list[int] = []
    for k in known:
        if hull and tokens[hull[-1]] == tokens[k]:
            continue  # same cost, lower (or equal) Elo: never on the hull
        while len(hull) >= 2 and _turn(hull[-2], hull[-1], k, tokens, elo) > 0:
            hull.pop()
        hull.append(k)
    # Only the rising part of the hull is a frontier: past the best arm, more tokens buy less.
    best = max(range(len(hull)), key=lambda h: (elo[hull[h]], -h)) if hull else -1
    return hull[: best + 1]


def _turn(a: int, b: int, c: int, x: np.ndarray, y: np.ndarray) -> float:
    """> 0 when b lies below the segment a→c (not on the upper hull); collinear (0) stays."""
    return float((x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a]))


def _pass_columns(cost: Any, tokens: float) -> dict[str, Any]:
    """Pass and success columns of one arm (see ``budget.outcomes`` for what they count).

    ``pass_at_1`` and ``tokens_per_success`` are the *submitted answer's*: one attempt per
    session, so a best-of-8 arm is charged its 8 samples per solved task. Cost objects without
    solved sessions (``per_task_solved``) give them only when every session is one sample.
    """
    out: dict[str, Any] = {
        "pass_at_1": None,
        "sample_accuracy": None,
        "pass_k": None,
        "pass_at_k": None,
        "tokens_per_success": None,
        "solved": None,
        "sessions": None,
    }
    if cost is None:
        return out
    per_n = _field(cost, "per_task_n") or {}
    per_c = _field(cost, "per_task_c") or {}
    tasks = [t for t, nt in per_n.items() if nt and nt > 0]
    attempted = _field(cost, "per_task_sessions") or {}
    # the task set of pass@1: a task the arm ran whose calls all failed scored nothing and
    # counts as a failure (0), not a dropped task (it read pass@k 0.75 beside pass@1 0.60)
    failed = [t for t, m in attempted.items() if m and not per_n.get(t)]
    if tasks:
        ns = np.array([int(per_n[t]) for t in tasks])
        cs = np.array([int(per_c.get(t, 0)) for t in tasks])
        k = _field(cost, "k") or int(ns.min())  # samples per session, smallest over tasks
        zeros = [0.0] * len(failed)
        out["sample_accuracy"] = float(np.mean(list(cs / ns) + zeros))
        out["pass_k"] = k
        out["pass_at_k"] = float(
            np.mean([pass_at_k(int(a), int(b), k) for a, b in zip(ns, cs, strict=True)] + zeros)
        )
        kk = min(k, int(ns.min()) - 1)  # best-of-kk vs one disjoint sample must fit a pool
        if kk >= 2:  # what best-of-k of these pass/fail samples can gain per decade
            pools = [np.repeat([1.0, 0.0], [c, m - c]) for m, c in zip(ns, cs, strict=True)]
            gain = best_of_k_gains(pools, kk, (kk,))[kk - 1]
            if math.isfinite(gain):
                out["passfail_reference_elo_per_decade"] = float(gain / math.log10(kk))
    solved_by_task = _field(cost, "per_task_solved")
    sessions_by_task = _field(cost, "per_task_sessions")
    if solved_by_task is None and tasks and all(per_n[t] == 1 for t in tasks):
        # one sample a task: that sample is the submitted answer
        solved_by_task = {t: int(per_c.get(t, 0)) for t in tasks}
        sessions_by_task = {t: int(per_n[t]) for t in tasks}
    if solved_by_task is None or not sessions_by_task or _field(cost, "scored") is False:
        return out
    attempts = [t for t, m in sessions_by_task.items() if m]
    solved = int(sum(solved_by_task.get(t, 0) for t in attempts))
    out["solved"] = solved
    out["sessions"] = int(sum(sessions_by_task[t] for t in attempts))
    out["pass_at_1"] = float(
        np.mean([solved_by_task.get(t, 0) / sessions_by_task[t] for t in attempts])
    )
    total = _field(cost, "total_tokens")
    if not total and math.isfinite(tokens):
        total = tokens * len(attempts)  # tokens per task (per session) x tasks
    if solved and total:
        out["tokens_per_success"] = float(total / solved)  # a ratio of sums
    return out


def interval_text(lo: float | None, hi: float | None) -> str:
    """'950..1040'; a one-sided bound ('1616..+inf') where the data identify only one end
    (rating.identify); 'n/a' when neither end is identified; '' without an interval."""
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return ""
    if math.isinf(lo) and math.isinf(hi):
        return "n/a"
    left = "-inf" if math.isinf(lo) else f"{lo:.0f}"
    right = "+inf" if math.isinf(hi) else f"{hi:.0f}"
    return f"{left}..{right}"


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _tokens(names: Sequence[str], costs: Mapping[str, Any]) -> np.ndarray:
    out = np.full(len(names), np.nan)
    for k, name in enumerate(names):
        cost = costs.get(name)
        value = _field(cost, "tokens_per_task") if cost is not None else None
        if value is not None:
            try:
                v = float(value)
            except (TypeError, ValueError):
                continue
            if math.isfinite(v) and v > 0:
                out[k] = v
    return out


def _unjudged_tasks(comparisons, costs: Mapping[str, Any]) -> list[str]:
    """Arms that ran tasks on which they have no comparison (every call failed, or nothing
    was judged): the fit leaves those tasks out for that arm, which flatters an arm that fails
    on hard tasks (informative missingness). pass@1 and tokens per success count them as
    unsolved attempts; the warning says how many the Elo ignores."""
    seen: dict[str, set[str]] = {}
    for side in (comparisons.i, comparisons.j):
        for player, task in zip(side.tolist(), comparisons.task.tolist(), strict=True):
            seen.setdefault(comparisons.players[player], set()).add(comparisons.tasks[task])
    parts = []
    for name in comparisons.players:
        ran = _field(costs.get(name), "per_task_sessions") if costs.get(name) is not None else None
        if not ran:
            continue
        missing = [t for t in ran if t not in seen.get(name, set())]
        if missing:
            parts.append(f"{name} on {len(missing)} of {len(ran)}")
    if not parts:
        return []
    return [
        "arms ran tasks on which they have no comparison (failed or unjudged): "
        + ", ".join(parts)
        + " tasks; the Elo leaves those tasks out for them (pass@1 and tokens per success "
        "count them as unsolved), so an arm that fails on hard tasks can look better than it is"
    ]


def _cost_mismatch(names: Sequence[str], costs: Mapping[str, Any], tokens: np.ndarray) -> list[str]:
    out = []
    missing = [n for k, n in enumerate(names) if not math.isfinite(tokens[k])]
    if missing:
        out.append(
            f"no token usage in the ledger for: {', '.join(missing)} (token columns left empty)"
        )
    guessed = [n for n in names if (_field(costs.get(n), "usage_estimated") or 0) > 0]
    if guessed:
        parts = [
            f"{n} ({_field(costs[n], 'usage_estimated')} calls, "
            f"{(_field(costs[n], 'estimated_token_share') or 0):.0%} of tokens)"
            for n in guessed
        ]
        out.append(CodedWarning(
            "usage.estimated",
            "Elo per token uses ESTIMATED token counts (the gateway reported no usage) for: "
            + ", ".join(parts)
            + "; fix: a gateway that reports usage (stream_options.include_usage)",
        ))
    extra = sorted(set(costs) - set(names))
    if extra:
        out.append(f"ledger arms with no comparisons (not rated): {', '.join(extra)}")
    return out
