"""Budget curves inside agent sessions: is the agent's own strategy better than sampling again?

The runner judges snapshots of an agent session's work folder at increasing budgets
and writes one ``role = "checkpoint"`` row per snapshot (``budget_tokens``/``_turns``/
``_seconds``, ``score``, ``passed``; docs/agents.md). Here:

1. **Traces.** Each agent session (``task_id, arm, session, sample``) is the sequence of its
   checkpoints in budget order; its value at a checkpoint is that snapshot's score (signed by
   ``direction``: higher is better), else ``passed`` as 1/0. A chat arm (no checkpoint rows,
   e.g. a k-shot ``best_of_n`` arm) is traced by its calls: after each call, the best score so
   far (what :mod:`eloledger.budget.curves` uses). An agent session without checkpoint rows is
   one checkpoint at its end.
2. **Players on the arm's grid.** Budgets are bucketed on a 1.5x grid per arm, from ``b0`` (the
   budget by which all its sessions but outliers have a judged checkpoint) to the median
   session length; a
   session's entry for player ``arm@b`` is its value at its latest checkpoint within ``b``
   (none yet: loses to any score, ties with none; a session that already ended keeps its final
   value: under a cap of b it would have submitted that). So every session contributes to
   every budget of its arm and the players are comparable across sessions.
3. **One pooled fit.** Within each task every entry meets every entry of *another* session
   (higher value wins, ties 0.5) -- agent and chat arms alike -- aggregated to soft outcomes
   per (task, player pair), one Bradley-Terry fit (:func:`eloledger.rating.bt.fit_bt`),
   task-clustered sandwich intervals (:func:`eloledger.rating.sandwich.bt_sandwich`); a
   slope's interval is that of its contrast (each task's pull on it,
   :func:`eloledger.rating.sandwich.task_influence`), not a difference of two intervals, with
   the t quantile at the stretch's effective number of tasks (:func:`_slope_intervals`).
4. **The repeated-sampling line.** With budget b one can instead run ``k = floor(b / s0)``
   independent sessions cut at b0 and keep the best, s0 being what such a session spends
   (its latest checkpoint within b0: a session's leftover between checkpoints is not lost).
   The agent meets that sampler head to head in the data's own tie structure
   (:mod:`eloledger.budget.sampling_line`): within each task, each session at b against the
   best of k *other* sessions cut at b0, by exact counting, ties half; the gap is the Elo of
   the mean win rate, its interval a t interval over tasks, which carries the line's own
   sampling error. The line is drawn at Elo - gap (``line_kind`` "paired"). A budget needs
   k + 1 sessions on at least 5 tasks; past that the line continues with +400·log10 k from
   the last tested point, labelled ``law``, without a gap interval. (The old line, the
   pooled fit's b0 plus a best-of-k gain or the tie-free law, called an exact sampler
   "below" in 62-100% of pass/fail runs: tests/rating/test_rating_checkpoint_verdict.py.)
5. **Reading it.** ``gap`` = Elo - line at each budget (with its interval); the **verdict** at
   the arm's last tested budget with k >= 2: ``above`` (the gap's interval is above 0: the
   agent's own strategy beats sampling again), ``below`` (under 0) or ``on``; with no such
   budget, ``verdict_note`` says "too few sessions for a verdict". ``slows_down_after``: the
   last budget before the curve falls clearly below the line and stays there.
   ``slope_per_decade``: Elo per tenfold budget over each stretch (the line's beside it).

The x axis is tokens (``budget_tokens``), cost (the session's price from ``prices.toml``,
spread over its tokens) or seconds (``budget_seconds``; chat calls: their latency). Per arm:
accuracy (sessions whose submitted answer passes, :mod:`eloledger.budget.outcomes`) per dollar
and per model call (an agent's turns, a chat arm's calls).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eloledger.budget.sessions import budget_rows, row_score, row_tokens, session_key
from eloledger.errors import UserError

AXES = ("tokens", "cost", "seconds")
AXIS_LABEL = {
    "tokens": "session budget, tokens",
    "cost": "session budget, cost (prices.toml)",
    "seconds": "session budget, seconds",
}
VERDICTS = ("above", "on", "below")
LINE_LAW = ("best of k = floor(b / s0) independent sessions cut at b0, s0 = what such a session "
            "spends, met head to head within each task (+400·log10 k past k + 1 sessions)")  # fmt: skip
_MAX_ENTRIES = 4000  # entries of one task compared at once (E x E floats)
MIN_TASKS = 5  # fewer tasks (clusters) than this: no intervals (see _withhold)
_OUTLIER = 2.0  # a first checkpoint past this times the median first one does not set b0


@dataclass
class Trace:
    """One session: its budgets on the chosen axis and its value at each, in order."""

    task: str
    arm: str
    key: str
    kind: str  # "agent" (checkpoint rows) or "chat" (calls)
    budgets: np.ndarray
    values: np.ndarray  # signed score (higher is better); -inf when not scored
    calls: float  # model calls of the session (an agent's turns)
    cost: float  # the session's cost (NaN without a price)

    def at(self, grid: np.ndarray) -> np.ndarray:
        """The value at the latest checkpoint within each budget (-inf before the first)."""
        idx = np.searchsorted(self.budgets, grid, side="right") - 1
        out = np.full(len(grid), -np.inf)
        out[idx >= 0] = self.values[idx[idx >= 0]]
        return out


@dataclass
class CheckpointArm:
    """One arm's curve against its repeated-sampling line; arrays align with ``budgets``."""

    name: str
    kind: str
    budgets: np.ndarray
    elo: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    line: np.ndarray
    line_kind: list[str]  # per point: "empirical" or "law"
    k: np.ndarray  # independent sessions of budget b0 that each budget affords
    gap: np.ndarray
    gap_low: np.ndarray
    gap_high: np.ndarray
    slope: np.ndarray  # one fewer than budgets
    slope_low: np.ndarray
    slope_high: np.ndarray
    line_slope: np.ndarray
    verdict: str | None
    verdict_budget: float | None
    slows_down_after: float | None
    sessions: int
    tasks: int
    verdict_note: str | None = None  # why there is no verdict (too few sessions)
    accuracy: float | None = None
    accuracy_basis: str | None = None  # "passed" (tests) or "median" (scored tasks)
    cost_per_session: float | None = None
    calls_per_session: float | None = None

    @property
    def accuracy_per_dollar(self) -> float | None:
        if self.accuracy is None or not self.cost_per_session:
            return None
        return self.accuracy / self.cost_per_session

    @property
    def accuracy_per_call(self) -> float | None:
        if self.accuracy is None or not self.calls_per_session:
            return None
        return self.accuracy / self.calls_per_session

    def verdict_index(self) -> int | None:
        hit = [] if self.verdict_budget is None else np.flatnonzero(
            self.budgets == self.verdict_budget
        )
        return int(hit[0]) if len(hit) else None

    def to_dict(self) -> dict[str, Any]:
        points = []
        for n, b in enumerate(self.budgets):
            points.append(
                {
                    "budget": _num(b),
                    "elo": _r(self.elo[n]),
                    "ci_low": _r(self.ci_low[n]),
                    "ci_high": _r(self.ci_high[n]),
                    "line": _r(self.line[n]),
                    "line_kind": self.line_kind[n],
                    "k": int(self.k[n]),
                    "gap": _r(self.gap[n]),
                    "gap_ci": [_r(self.gap_low[n]), _r(self.gap_high[n])],
                    "slope_per_decade": _r(self.slope[n - 1]) if n else None,
                    "slope_ci": [_r(self.slope_low[n - 1]), _r(self.slope_high[n - 1])]
                    if n
                    else None,
                    "line_slope_per_decade": _r(self.line_slope[n - 1]) if n else None,
                }
            )
        at = self.verdict_index()
        return {
            "name": self.name,
            "kind": self.kind,
            "points": points,
            "verdict": self.verdict,
            "verdict_note": self.verdict_note,
            "verdict_budget": None if self.verdict_budget is None else _num(self.verdict_budget),
            "verdict_gap": None if at is None else _r(self.gap[at]),
            "verdict_ci": None if at is None else [_r(self.gap_low[at]), _r(self.gap_high[at])],
            "slows_down_after": None
            if self.slows_down_after is None
            else _num(self.slows_down_after),
            "sessions": self.sessions,
            "tasks": self.tasks,
            "accuracy": _r(self.accuracy, 4),
            "accuracy_basis": self.accuracy_basis,
            "cost_per_session": _r(self.cost_per_session, 6),
            "calls_per_session": _r(self.calls_per_session),
            "accuracy_per_dollar": _r(self.accuracy_per_dollar, 4),
            "accuracy_per_call": _r(self.accuracy_per_call, 4),
        }


@dataclass
class CheckpointResult:
    """What ``eloledger curve`` prints for a ledger with checkpoints, and the figure shows."""

    arms: list[CheckpointArm]
    axis: str
    anchor: str
    grid: float
    level: float = 0.95
    warnings: list[str] = field(default_factory=list)
    tasks: int = 0  # clusters of the fit (tasks with at least one comparison)
    intervals_note: str | None = None  # set when there are too few tasks for intervals

    def arm(self, name: str) -> CheckpointArm:
        for a in self.arms:
            if a.name == name:
                return a
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "checkpoints",
            "axis": self.axis,
            "anchor": self.anchor,
            "grid": self.grid,
            "level": self.level,
            "line": LINE_LAW,
            "tasks": self.tasks,
            "intervals": {"min_tasks": MIN_TASKS, "shown": self.intervals_note is None,
                          "note": self.intervals_note},  # fmt: skip
            "arms": [a.to_dict() for a in self.arms],
            "warnings": list(self.warnings),
        }


def has_checkpoints(rows: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any row is a judged checkpoint (then ``curve`` uses this module)."""
    return any(r.get("role") == "checkpoint" for r in rows)


def checkpoint_curves(
    rows: Sequence[Mapping[str, Any]],
    *,
    axis: str = "tokens",
    grid: float = 1.5,
    prices: Mapping[str, Any] | None = None,
    seed: int = 0,
    level: float = 0.95,
) -> CheckpointResult:
    """Every (arm, budget) in one pooled fit against each arm's repeated-sampling line."""
    if axis not in AXES:
        raise UserError(f"--axis {axis}: unknown axis", fix="use tokens, cost or seconds")
    if not (isinstance(grid, (int, float)) and math.isfinite(grid) and grid > 1.0):
        raise UserError(f"--grid {grid}: the grid ratio must be a number above 1", fix="--grid 1.5")
    warnings: list[str] = []
    if prices is None:  # also off the cost axis: the arm table's cost and accuracy per $
        from eloledger.ledger.prices import load_prices

        try:
            prices = load_prices()
        except UserError as exc:
            if axis == "cost":
                raise
            warnings.append(f"no cost per session: {exc.message}")
            prices = {}
    traces = build_traces(rows, axis, prices or {}, warnings)
    arms = sorted({t.arm for t in traces})
    grids: dict[str, np.ndarray] = {}
    for arm in arms:
        own = [t for t in traces if t.arm == arm]
        made = _arm_grid(own, grid)
        if made is None:
            warnings.append(f"arm {arm}: no session has a judged checkpoint; left out")
            continue
        grids[arm] = made
    if not grids:
        raise UserError(
            "ledger: no judged checkpoint or scored call",
            fix="judge the run first so that checkpoint or sample rows carry score or passed",
        )
    median_cost = {
        a: float(np.median([t.budgets[-1] for t in traces if t.arm == a])) for a in grids
    }
    order = sorted(grids, key=lambda a: (median_cost[a], a))  # cheapest first: the anchor
    names: list[str] = []
    players: dict[str, np.ndarray] = {}
    for arm in order:
        players[arm] = np.arange(len(names), len(names) + len(grids[arm]))
        names.extend(f"{arm}@{_label(b, axis)}" for b in grids[arm])
    kept = [t for t in traces if t.arm in grids]
    comps = _comparisons(kept, grids, players, names)

    from eloledger.rating.bt import aggregate, fit_bt, to_elo
    from eloledger.rating.sandwich import bt_sandwich

    W = aggregate(comps)
    fit = fit_bt(W, prior=0.0, players=names)
    warnings.extend(fit.warnings)
    anchor = int(players[order[0]][0])
    elo = to_elo(fit.theta, anchor)
    sw = bt_sandwich(comps, fit.theta, prior=fit.prior, anchor=anchor, W=W, level=level, seed=seed)
    from eloledger.rating.sandwich import task_influence

    psi = task_influence(comps, fit.theta, prior=fit.prior, W=W)
    summary = _summaries(rows, kept)
    out = []
    for arm in order:
        own = [t for t in kept if t.arm == arm]
        out.append(_arm_result(arm, own, grids[arm], players[arm], elo, sw, psi, level, summary))
    clusters = int(comps.n_tasks)
    note = None
    if clusters < MIN_TASKS:
        note = (f"intervals need >= {MIN_TASKS} tasks; these have {clusters}: no intervals, "
                "verdicts or slows-down budgets (point estimates only)")  # fmt: skip
        for arm_result in out:
            _withhold(arm_result)
    result = CheckpointResult(out, axis, names[anchor], float(grid), level, warnings)
    result.tasks, result.intervals_note = clusters, note
    return result


def _slope_intervals(
    psi: np.ndarray, idx: np.ndarray, budgets: np.ndarray, slope: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Slope ± t·se per stretch, with the t quantile at the stretch's *effective* number of
    tasks: u_t = task t's pull on the contrast (``sandwich.task_influence``), se² =
    T/(T-1)·Σ u_t², and G* = (Σ u_t²)² / Σ u_t⁴ (Carter, Schnepel & Steigerwald 2017: tasks
    that barely move the contrast -- all pass, all fail -- do not count as clusters). With
    t at T - 1 degrees of freedom the intervals covered 0.90 on pass/fail at 8 tasks."""
    from scipy.special import stdtrit

    from eloledger.rating.bt import ELO_SCALE

    u = psi[:, idx[1:]] - psi[:, idx[:-1]]  # tasks x stretches
    T = max(int(np.count_nonzero(np.abs(psi).sum(1))), 2)
    square = (u**2).sum(0)
    se = ELO_SCALE * np.sqrt(square * T / (T - 1.0)) / np.diff(np.log10(budgets))
    with np.errstate(invalid="ignore", divide="ignore"):
        eff = np.where(square > 0, square**2 / (u**4).sum(0), T)
    q = stdtrit(np.maximum(eff - 1.0, 1.0), 0.5 + level / 2.0)
    return slope - q * se, slope + q * se


def _withhold(arm: CheckpointArm) -> None:
    """Blank what rests on the task-clustered intervals: with K tasks the sandwich has K
    clusters, its t quantile K - 1 degrees of freedom (12.7 at K = 2), and the covariance of
    the many (arm, budget) players has rank below K: intervals like [-8952, 12494]."""
    for name in ("ci_low", "ci_high", "gap_low", "gap_high", "slope_low", "slope_high"):
        setattr(arm, name, np.full_like(getattr(arm, name), np.nan, dtype=float))
    arm.verdict = None  # verdict_budget stays: the gap there is still the point estimate
    arm.slows_down_after = None


# --------------------------------------------------------------------------- traces


def build_traces(
    rows: Sequence[Mapping[str, Any]],
    axis: str,
    prices: Mapping[str, Any],
    warnings: list[str],
) -> list[Trace]:
    """One trace per agent session (its checkpoint rows) and per chat session (its calls)."""
    checkpoints: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("role") == "checkpoint" and row.get("task_id") is not None:
            checkpoints.setdefault(_agent_key(row), []).append(row)
    calls: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    agent_rows: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for row in budget_rows(rows):
        if row.get("task_id") is None or row.get("arm") is None:
            continue
        if row.get("agent") or _agent_key(row) in checkpoints:
            agent_rows[_agent_key(row)] = row
        else:
            key = (str(row["task_id"]), str(row["arm"]), session_key(row.get("session")))
            calls.setdefault(key, []).append(row)
    traces: list[Trace] = []
    no_price: set[str] = set()
    for key in sorted(set(checkpoints) | set(agent_rows)):
        session = agent_rows.get(key)
        points = checkpoints.get(key) or ([session] if session is not None else [])
        traces.append(_agent_trace(key, points, session, axis, prices, no_price))
    for key, group in sorted(calls.items()):
        traces.append(_chat_trace(key, group, axis, prices, no_price))
    if axis == "cost" and no_price:
        listed = ", ".join(sorted(no_price)[:5])
        raise UserError(
            f"--axis cost: no price for model(s) {listed} in prices.toml",
            fix='add [models."MODEL"] input = ... output = ... (per 1M tokens) to prices.toml',
        )
    bad = [t for t in traces if not np.isfinite(t.budgets).all()]
    if bad:
        raise UserError(
            f"ledger: {len(bad)} session(s) have no {axis} budget (task {bad[0].task}, "
            f"arm {bad[0].arm})",
            fix="use --axis tokens, or a ledger whose rows record "
            + ("budget_seconds / latency_ms" if axis == "seconds" else "token usage"),
        )
    if not traces:
        raise UserError(
            "ledger: no checkpoint or sample rows", fix="point eloledger at the run's ledger"
        )
    return traces


def _agent_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    session = session_key(row.get("session"))
    sample = session_key(row.get("sample"))
    return (str(row.get("task_id")), str(row.get("arm")), f"{session}/{sample}")


def _agent_trace(
    key: tuple[str, str, str],
    points: list[Mapping[str, Any]],
    session: Mapping[str, Any] | None,
    axis: str,
    prices: Mapping[str, Any],
    no_price: set[str],
) -> Trace:
    """An agent session's checkpoints in budget order (a session row alone: one point)."""
    total = row_tokens(session) if session is not None else None
    cost = _row_cost(session, prices, no_price) if session is not None else math.nan
    items = []
    for p in points:
        tokens = _number(p.get("budget_tokens"))
        if tokens is None:
            tokens = row_tokens(p) or 0.0
        if axis == "tokens":
            budget = tokens
        elif axis == "seconds":
            budget = _number(p.get("budget_seconds"))
            if budget is None and p is session:
                latency = _number(p.get("latency_ms"))
                budget = None if latency is None else latency / 1000.0
            budget = math.nan if budget is None else budget
        else:
            budget = cost * tokens / total if total else math.nan
        value = row_score(p)
        order = _number(p.get("checkpoint"))
        items.append((order if order is not None else math.inf, budget, value))
    items.sort(key=lambda x: (x[1], x[0]))
    budgets = np.array([x[1] for x in items], dtype=float)
    values = np.array([-np.inf if x[2] is None else x[2] for x in items], dtype=float)
    turns = _number(session.get("turns")) if session is not None else None
    return Trace(*key, "agent", budgets, values, turns or 1.0, cost)


def _chat_trace(
    key: tuple[str, str, str],
    group: list[Mapping[str, Any]],
    axis: str,
    prices: Mapping[str, Any],
    no_price: set[str],
) -> Trace:
    """A chat session's calls in order; its value after each is the best score so far."""
    group = sorted(
        group, key=lambda r: (_number(r.get("sample")) or -1.0, _number(r.get("round")) or -1.0)
    )
    spend = []
    for row in group:
        if axis == "tokens":
            spend.append(row_tokens(row) or 0.0)
        elif axis == "seconds":
            latency = _number(row.get("latency_ms"))
            spend.append(math.nan if latency is None else latency / 1000.0)
        else:
            spend.append(_row_cost(row, prices, no_price))
    scores = [row_score(r) for r in group]
    values = np.fmax.accumulate([-np.inf if s is None else s for s in scores])
    cost = float(sum(_row_cost(r, prices, set()) for r in group))
    return Trace(*key, "chat", np.cumsum(spend), values, float(len(group)), cost)


def _row_cost(row: Mapping[str, Any], prices: Mapping[str, Any], no_price: set[str]) -> float:
    """One call's cost from the price table (NaN, and the model noted, when unpriced)."""
    price = prices.get(str(row.get("model")))
    if price is None:
        no_price.add(str(row.get("model")))
        return math.nan
    prompt = _number(row.get("prompt_tokens")) or 0.0
    completion = _number(row.get("completion_tokens")) or 0.0
    if not prompt and not completion:
        prompt = row_tokens(row) or 0.0  # a total alone: billed at the input price
    cached = _number(row.get("cached_tokens")) or 0.0
    written = _number(row.get("cache_write_tokens")) or 0.0
    cost = max(prompt - cached - written, 0.0) * price.input + completion * price.output
    for tokens, rate in ((cached, price.cache_read), (written, price.cache_write)):
        if tokens:
            cost += tokens * rate if rate is not None else math.nan
    return cost / 1e6


# --------------------------------------------------------------------------- the fit


def _arm_grid(own: list[Trace], ratio: float) -> np.ndarray | None:
    """b0 times ratio^m up to the median session length; b0 is the budget by which every
    session of the arm has a judged checkpoint, but for outliers (a first checkpoint past
    twice the median first one). Sessions snapshot on their own grids, from their own first
    turn: at the median budget half of them would have nothing to show yet, and even at the
    90% quantile the line's sessions cut at b0 waste a tenth of their tries, so that a pure
    sampler with session costs jittered +-20% read 'above' its line by ~25 Elo (1 seed in
    4; tests/rating/test_rating_truth_jitter.py)."""
    firsts = []
    for t in own:
        hit = np.flatnonzero(np.isfinite(t.values))
        firsts.append(t.budgets[hit[0]] if len(hit) else math.inf)
    median = float(np.median(firsts))
    if not math.isfinite(median):
        return None
    usual = [f for f in firsts if f <= _OUTLIER * median]
    b0 = max(max(usual), 1e-12)
    end = max(float(np.median([t.budgets[-1] for t in own])), b0)
    count = int(math.floor(math.log(end / b0) / math.log(ratio) + 1e-9)) + 1
    points = b0 * ratio ** np.arange(count)
    if end / points[-1] >= math.sqrt(ratio):
        points = np.append(points, end)
    return points


def _comparisons(
    traces: list[Trace],
    grids: dict[str, np.ndarray],
    players: dict[str, np.ndarray],
    names: list[str],
) -> Any:
    """Soft outcomes per (task, player pair) from every pair of entries of different sessions."""
    from eloledger.rating.comparisons import Comparisons

    n = len(names)
    by_task: dict[str, list[int]] = {}
    for s, t in enumerate(traces):
        by_task.setdefault(t.task, []).append(s)
    task_ids: list[str] = []
    a: list[int] = []
    b: list[int] = []
    out: list[float] = []
    weight: list[float] = []
    for task, members in sorted(by_task.items()):
        value = np.concatenate([traces[s].at(grids[traces[s].arm]) for s in members])
        player = np.concatenate([players[traces[s].arm] for s in members])
        session = np.repeat(np.arange(len(members)), [len(grids[traces[s].arm]) for s in members])
        wins = np.zeros((n, n))
        games = np.zeros((n, n))
        onehot = np.zeros((len(value), n))
        onehot[np.arange(len(value)), player] = 1.0
        for lo in range(0, len(value), _MAX_ENTRIES):  # blocks of rows: E x E stays small
            hi = min(lo + _MAX_ENTRIES, len(value))
            v = value[lo:hi, None]
            other = (session[lo:hi, None] != session[None, :]).astype(float)
            score = ((v > value[None, :]) + 0.5 * (v == value[None, :])) * other
            wins += onehot[lo:hi].T @ score @ onehot
            games += onehot[lo:hi].T @ other @ onehot
        i, j = np.nonzero(np.triu(games, 1))
        task_ids.extend([task] * len(i))
        a.extend(i.tolist())
        b.extend(j.tolist())
        out.extend((wins[i, j] / games[i, j]).tolist())
        weight.extend(games[i, j].tolist())
    if not out:
        raise UserError(
            "ledger: no two sessions share a task", fix="run at least two sessions per task"
        )
    return Comparisons.from_arrays(
        task_ids, [names[k] for k in a], [names[k] for k in b], out, weight, players=names,
        source="checkpoints",
    )  # fmt: skip


def _spent_at(own: list[Trace], b0: float) -> float:
    """What a session of the arm cut at b0 spends on average: its latest checkpoint within b0
    (all of b0 when it has none by then; its end when it ended sooner). The line's k counts
    sessions of that cost, not of b0: a long session reuses the budget left between its
    checkpoints, and sessions cut at b0 with the leftover wasted made a sampler read 'above'
    when session costs vary (tests/rating/test_rating_truth_jitter.py)."""
    spent = []
    for t in own:
        idx = int(np.searchsorted(t.budgets, b0, side="right")) - 1
        spent.append(b0 if idx < 0 else float(t.budgets[idx]))
    return max(float(np.mean(spent)), 1e-12)


def _paired_line(
    own: list[Trace], budgets: np.ndarray, k: np.ndarray, level: float
) -> list[Any]:
    """Per budget, the agent against the best of k of its own sessions cut at b0, head to head
    within each task (:func:`eloledger.budget.sampling_line.paired_gap`); None where fewer
    than MIN_TASKS tasks have k + 1 sessions."""
    from eloledger.budget.sampling_line import paired_gap

    by_task: dict[str, list[Trace]] = {}
    for t in own:
        by_task.setdefault(t.task, []).append(t)
    at_b0 = [np.array([t.at(budgets[:1])[0] for t in ts]) for ts in by_task.values()]
    values = [np.array([t.at(budgets) for t in ts]) for ts in by_task.values()]
    return [
        paired_gap([v[:, n] for v in values], at_b0, int(k[n]), level)
        for n in range(len(budgets))
    ]


def _arm_result(
    arm: str,
    own: list[Trace],
    budgets: np.ndarray,
    idx: np.ndarray,
    elo_all: np.ndarray,
    sw: Any,
    psi: np.ndarray,
    level: float,
    summary: dict[str, Summary],
) -> CheckpointArm:
    from eloledger.budget.reference import ELO_PER_LN

    elo = elo_all[idx]
    k = np.maximum(np.floor(budgets / _spent_at(own, float(budgets[0])) + 1e-9).astype(int), 1)
    paired = _paired_line(own, budgets, k, level)
    gap = np.full(len(budgets), np.nan)
    gap_low, gap_high = gap.copy(), gap.copy()
    line = gap.copy()
    kinds = []
    base, base_k = float(elo[0]), 1  # where the law continues from
    for n, test in enumerate(paired):
        if test is not None:
            gap[n], gap_low[n], gap_high[n] = test.gap, test.low, test.high
            line[n] = elo[n] - test.gap
            base, base_k = float(line[n]), int(k[n])
            kinds.append("paired")
        else:  # too few sessions to test: the tie-free law, shown without an interval
            line[n] = base + ELO_PER_LN * math.log(max(k[n], 1) / base_k)
            gap[n] = elo[n] - line[n]
            kinds.append("law")
    decades = np.diff(np.log10(budgets))
    slope = np.diff(elo) / decades
    s_low, s_high = _slope_intervals(psi, idx, budgets, slope, level)
    verdict = at = None
    eligible = np.flatnonzero((k >= 2) & np.isfinite(gap_low))
    note = None
    if len(eligible):
        at = int(eligible[-1])
        verdict = "above" if gap_low[at] > 0 else "below" if gap_high[at] < 0 else "on"
    elif (k >= 2).any():
        note = _too_few_sessions(own, int(k[k >= 2].min()))
    below = gap_high < 0
    slows = None
    if below.any() and below[-1]:
        first = len(below) - int(np.argmin(below[::-1])) if not below.all() else 0
        slows = float(budgets[max(first - 1, 0)])
    accuracy, basis, cost, calls = summary.get(arm, (None, None, None, None))
    return CheckpointArm(
        name=arm,
        kind=own[0].kind,
        budgets=budgets,
        elo=elo,
        ci_low=sw.ci_low[idx],
        ci_high=sw.ci_high[idx],
        line=line,
        line_kind=kinds,
        k=k,
        gap=gap,
        gap_low=gap_low,
        gap_high=gap_high,
        slope=slope,
        slope_low=s_low,
        slope_high=s_high,
        line_slope=np.diff(line) / decades,
        verdict=verdict,
        verdict_budget=None if at is None else float(budgets[at]),
        slows_down_after=slows,
        verdict_note=note,
        sessions=len(own),
        tasks=len({t.task for t in own}),
        accuracy=accuracy,
        accuracy_basis=basis,
        cost_per_session=cost,
        calls_per_session=calls,
    )


def _too_few_sessions(own: list[Trace], k: int) -> str:
    from eloledger.budget.sampling_line import MIN_TASKS, sessions_needed

    per_task: dict[str, int] = {}
    for t in own:
        per_task[t.task] = per_task.get(t.task, 0) + 1
    most = max(per_task.values())
    return (f"too few sessions for a verdict: a budget worth k = {k} sessions needs "
            f"{sessions_needed(k)} sessions on each of >= {MIN_TASKS} tasks (these have at most "
            f"{most} per task)")  # fmt: skip


Summary = tuple[float | None, str | None, float | None, float | None]


def _summaries(rows: Sequence[Mapping[str, Any]], traces: list[Trace]) -> dict[str, Summary]:
    """Per arm: accuracy and its basis, mean cost and model calls per session. Accuracy is
    the share of sessions whose submitted answer passes (:mod:`eloledger.budget.outcomes`);
    on scored tasks, where nothing passes or fails, the share of sessions whose final score
    is at or above the task's median final score over every arm's sessions (``median``)."""
    from eloledger.budget.outcomes import arm_outcomes

    try:
        outcomes, _ = arm_outcomes(budget_rows(rows))
    except UserError:
        outcomes = {}
    finals: dict[str, list[float]] = {}
    for t in traces:
        finals.setdefault(t.task, []).append(float(t.values[-1]))
    median = {task: float(np.median(v)) for task, v in finals.items()}
    out: dict[str, Summary] = {}
    for arm in {t.arm for t in traces}:
        own = [t for t in traces if t.arm == arm]
        o = outcomes.get(arm)
        accuracy, basis = None, None
        if o is not None and o.scored and o.sessions:
            accuracy, basis = o.solved / o.sessions, "passed"
        elif any(np.isfinite(t.values[-1]) for t in own):
            hits = [np.isfinite(t.values[-1]) and t.values[-1] >= median[t.task] for t in own]
            accuracy, basis = float(np.mean(hits)), "median"
        costs = [t.cost for t in own]
        cost = float(np.mean(costs)) if all(math.isfinite(c) for c in costs) else None
        out[arm] = (accuracy, basis, cost, float(np.mean([t.calls for t in own])))
    return out


def _label(budget: float, axis: str) -> str:
    return f"${budget:.4g}" if axis == "cost" else f"{budget:.4g}s" if axis == "seconds" else (
        f"{budget:.0f}"
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _r(value: float | None, digits: int = 2) -> float | None:
    if value is None:
        return None
    value = float(value)
    return round(value, digits) + 0.0 if math.isfinite(value) else None


def _num(value: float) -> float | int:
    value = float(value)
    return int(value) if value.is_integer() else round(value, 4)
