"""Coverage studies of the Elo table's and the budget curves' intervals (seeded, numpy).

    .venv/bin/python bench/study_intervals.py [--reps N] [--only NAME]

* never-lose: a player who never loses (true +700 over the anchor), every pair compared 9
  times a task on one outcome (3 samples per arm); how often its lower bound lies above the
  truth (goal <= 0.025: a one-sided 97.5% bound).
* cot: ΔElo per 1K tokens and the marginal step for arms within 1-1.5x of each other's tokens
  (budget/sampling_sim.py cot_arms); coverage of the true ratio (population Elo gap over the
  population token gap).
* curves: budget-curve interval of an equal arm at the anchor's first budget (truth 1000),
  arm x task effects, at 6, 10 and 30 tasks (200 rounds, `curve`'s default): percentile and
  BCa from the same rounds.
* elo-bootstrap: `elo --intervals bootstrap` coverage at 5, 10 and 30 tasks (round robin, 4
  and 8 players, 1000 rounds: the default); elo-bootstrap-variants: the candidate small-sample
  corrections side by side on the same rounds.
* multiplicity: 8 and 16 arms equal to the anchor; the share of runs in which some arm's
  interval excludes the anchor, one at a time and with --simultaneous (goal <= 0.05).
Prints one markdown row per design: rate ± its Monte-Carlo standard error, and the goal.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from eloledger.budget.sampling_sim import (
    COT_ELO,
    cot_arms,
    cot_true_tokens,
    round_robin,
    sampling_sessions,
)
from eloledger.rating.comparisons import Comparisons
from eloledger.report.elo_table import elo_report


def _row(study: str, design: str, reps: int, hits: list[bool], goal: str) -> None:
    rate = float(np.mean(hits)) if hits else math.nan
    mc = math.sqrt(max(rate * (1 - rate), 1e-12) / max(len(hits), 1))
    print(f"| {study} | {design} | {reps} ({len(hits)} values) | {rate:.3f} ± {mc:.3f} | {goal} |")


def _comps(rows: list[tuple]) -> Comparisons:
    t, a, b, o = zip(*rows, strict=True)
    return Comparisons.from_arrays(list(t), list(a), list(b), list(o))


def never_lose(reps: int) -> None:
    truth = {"p0": 0, "p1": 100, "p2": 200, "top": 700}
    for tasks in (5, 10):
        above = []
        for rep in range(reps):
            rows = round_robin(truth, tasks, np.random.default_rng(rep))
            comps = _comps([r for r in rows for _ in range(9)])
            top = comps.player_index("top")
            if comps.wins()[top] < comps.games()[top]:
                continue
            report = elo_report(comps, anchor="p0", intervals="none")
            p = next(p for p in report.players if p["name"] == "top")
            above.append(p["ci_low"] > 1000 + truth["top"])
        _row("never-lose bound above the truth", f"{tasks} tasks, 3x3 samples", reps, above,
             "<= 0.025")  # fmt: skip


def cot(reps: int) -> None:
    for tasks in (30, 100):
        delta, marginal = [], []
        for rep in range(reps):
            rows, costs = cot_arms(tasks, rep)
            report = elo_report(_comps(rows), costs=costs, anchor="base", intervals="sandwich",
                                seed=rep)  # fmt: skip
            players = {p["name"]: p for p in report.players}
            for arm in ("cot", "cot_long"):
                gap = cot_true_tokens(arm) - cot_true_tokens("base")
                truth = COT_ELO[arm] / (gap / 1000.0)
                p = players[arm]
                delta.append(p["delta_elo_per_1k_low"] <= truth <= p["delta_elo_per_1k_high"])
            p = players["cot_long"]
            if "marginal_elo_per_1k_low" in p:
                prev = "cot" if players["cot"]["dominated"] is False else "base"
                gap = cot_true_tokens("cot_long") - cot_true_tokens(prev)
                truth = (COT_ELO["cot_long"] - COT_ELO[prev]) / (gap / 1000.0)
                marginal.append(p["marginal_elo_per_1k_low"] <= truth
                                <= p["marginal_elo_per_1k_high"])  # fmt: skip
        _row("ΔElo/1K interval covers", f"CoT, {tasks} tasks", reps, delta, "0.95")
        _row("marginal Elo/1K interval covers", f"CoT, {tasks} tasks", reps, marginal, "0.95")


CURVE_TASKS = (6, 10, 30)
FIRST_SEED = 0  # --first-seed: the curves study's runs are seeds FIRST_SEED .. + reps - 1


def curves(reps: int) -> None:
    """The anchor's first budget against the other (equal) arm's point there: truth 1000.
    Both rows from the same rounds of each run: the widened rounds' percentile interval (before)
    and their BCa interval, as `budget_curves` now prints (the same functions it calls)."""
    from eloledger.budget import curves as curve_parts
    from eloledger.rating.bootstrap import bca_interval
    from eloledger.rating.bt import fit_bt, to_elo

    for tasks in CURVE_TASKS:
        hits: dict[str, list[bool]] = {"percentile (before)": [], "BCa (now)": []}
        for rep in range(FIRST_SEED, FIRST_SEED + reps):
            rows = sampling_sessions(arms=("a", "b"), tasks=tasks, sessions=4, samples=4,
                                     arm_task_sd=1.0, seed=rep)  # fmt: skip
            setup = curve_parts._Setup.build(curve_parts.build_sessions(rows), 1.5, [])
            fit = fit_bt(setup.builder.build(), players=setup.player_names)
            elo = to_elo(fit.theta, setup.anchor)
            rounds = curve_parts._bootstrap(setup, fit.theta, fit.prior, 200, rep, "tasks", [])
            accel = curve_parts._acceleration(setup, fit.theta, fit.prior)
            anchor = setup.player_names[setup.anchor].split("@")[0]
            other = "b" if anchor == "a" else "a"
            at = np.flatnonzero(setup.arm_budgets[other] == setup.arm_budgets[anchor][0])
            if not len(at):
                continue
            k = setup.arm_players[other][at[0]]
            lo, hi = np.percentile(rounds[:, k], [2.5, 97.5])
            hits["percentile (before)"].append(lo <= 1000 <= hi)
            lo, hi = bca_interval(rounds[:, [k]], elo[[k]], accel[[k]], 0.95)
            hits["BCa (now)"].append(lo[0] <= 1000 <= hi[0])
        for name, hit in hits.items():
            seeds = f"seeds {FIRST_SEED}-{FIRST_SEED + reps - 1}"
            _row(f"curve bootstrap interval covers, {name}", f"{tasks} tasks x 4 sessions, 200 "
                 f"rounds, {seeds}", reps, hit, "0.95")  # fmt: skip


ELO_DESIGNS = (
    {"a": 0.0, "b": 60.0, "c": 120.0, "d": 200.0},
    {f"p{k}": 50.0 * k for k in range(8)},
)
ELO_ROUNDS = 1000  # `elo --intervals bootstrap`'s default


def _clustered_row(study: str, design: str, per_rep: list[np.ndarray], goal: str) -> None:
    """A row whose MC error treats each run as one draw (a run's intervals share its data)."""
    rate = float(np.concatenate(per_rep).mean())
    means = np.array([hits.mean() for hits in per_rep])
    mc = float(means.std(ddof=1) / math.sqrt(len(means))) if len(means) > 1 else math.nan
    values = sum(len(hits) for hits in per_rep)
    print(f"| {study} | {design} | {len(per_rep)} ({values} values) | {rate:.3f} ± {mc:.3f} "
          f"| {goal} |")  # fmt: skip


def elo_bootstrap(reps: int) -> None:
    for truth in ELO_DESIGNS:
        anchor = next(iter(truth))
        for tasks in (5, 10, 30):
            per_rep = []
            for rep in range(reps):
                comps = _comps(round_robin(truth, tasks, np.random.default_rng(rep)))
                players = elo_report(comps, anchor=anchor, intervals="bootstrap",
                                     bootstrap_rounds=ELO_ROUNDS, seed=rep).players  # fmt: skip
                rows = {p["name"]: p for p in players}
                per_rep.append(np.array([rows[k]["ci_low"] <= 1000 + truth[k] <= rows[k]["ci_high"]
                                         for k in truth if k != anchor]))  # fmt: skip
            design = f"{tasks} tasks, round robin, {len(truth)} players"
            _clustered_row("elo --intervals bootstrap covers", design, per_rep, "0.95")


def elo_bootstrap_variants(reps: int) -> None:
    """The candidate corrections side by side, from the same rounds of each run (full-data
    fits without an MLE are left out: `elo` bounds those players by `identify`)."""
    from scipy.special import ndtri, stdtrit

    from eloledger.rating.bootstrap import bootstrap
    from eloledger.rating.bt import aggregate, fit_bt, to_elo

    z = float(ndtri(0.975))
    for truth in ELO_DESIGNS:
        for tasks in (5, 10, 30):
            t = float(stdtrit(tasks - 1, 0.975))
            inflate = math.sqrt(tasks / (tasks - 1.0))
            per_rep: dict[str, list[np.ndarray]] = {}
            for rep in range(reps):
                comps = _comps(round_robin(truth, tasks, np.random.default_rng(rep)))
                fit = fit_bt(aggregate(comps))
                if not fit.mle_exists:
                    continue
                est = to_elo(fit.theta, 0)
                boot = bootstrap(comps, rounds=ELO_ROUNDS, seed=rep, theta0=fit.theta)
                widened = boot.elo_samples
                raw = est + (widened - est) / (inflate * t / z)
                pct_lo, pct_hi = np.quantile(raw, [0.025, 0.975], axis=0)
                wid_lo, wid_hi = np.quantile(widened, [0.025, 0.975], axis=0)
                sd = raw.std(0)
                t_lo, t_hi = _studentized(comps, raw, est, fit.theta, tasks, rep)
                ends = {
                    "percentile, no correction": (pct_lo, pct_hi),
                    "percentile x t_(G-1)/z (t on the half-widths)": (
                        est + (pct_lo - est) * t / z, est + (pct_hi - est) * t / z),
                    "normal, sd x sqrt(G/(G-1))": (est - z * inflate * sd, est + z * inflate * sd),
                    "percentile x sqrt(G/(G-1)) t_(G-1)/z (before)": (wid_lo, wid_hi),
                    "studentized (bootstrap-t, task sandwich per round)": (t_lo, t_hi),
                    "BCa x sqrt(G/(G-1)) t_(G-1)/z (now)": (boot.ci_low, boot.ci_high),
                }  # fmt: skip
                truth_elo = 1000 + np.array(list(truth.values())) - next(iter(truth.values()))
                for name, (lo, hi) in ends.items():
                    per_rep.setdefault(name, []).append(
                        ((lo <= truth_elo) & (truth_elo <= hi))[1:])
            design = f"{tasks} tasks, {len(truth)} players"
            for name, hits in per_rep.items():
                _clustered_row(f"bootstrap variant: {name}", design, hits, "0.95")


def _studentized(comps, raw, est, theta, tasks, seed):
    """Bootstrap-t ends: (θ* − θ̂)/se* per round, se* the task sandwich at the round's fit and
    multiplicities (the rounds' draws regenerated from the seed, as `bootstrap` makes them)."""
    from scipy.special import expit

    n, scale = comps.n_players, 400.0 / math.log(10.0)
    per_task = np.zeros((tasks, n, n))
    np.add.at(per_task, (comps.task, comps.i, comps.j), comps.outcome)
    np.add.at(per_task, (comps.task, comps.j, comps.i), 1.0 - comps.outcome)
    draws = np.random.default_rng(seed).integers(0, tasks, size=(raw.shape[0], tasks))
    counts = np.stack([np.bincount(d, minlength=tasks) for d in draws]).astype(float)

    def se(th, count):
        p = expit(th[:, None] - th[None, :])
        g = (per_task - (per_task + per_task.transpose(0, 2, 1)) * p).sum(2)
        meat = (g * count[:, None]).T @ g
        w = np.tensordot(count, per_task, 1)
        v = (w + w.T) * p * p.T
        h = -v + 1.0 / n
        h[np.diag_indices(n)] += v.sum(1)
        inv = np.linalg.inv(h)
        cov = inv @ meat @ inv
        d = np.diag(cov)
        return scale * np.sqrt(np.maximum(d + d[0] - 2.0 * cov[:, 0], 1e-300))

    se_hat = se(theta, np.ones(tasks))
    stud = np.array([(raw[r] - est) / se(raw[r] / scale, counts[r]) for r in range(len(raw))])
    q_lo, q_hi = np.quantile(stud, [0.025, 0.975], axis=0)
    return est - q_hi * se_hat, est - q_lo * se_hat


def multiplicity(reps: int) -> None:
    for arms in (8, 16):
        equal = {f"arm{k}": 0.0 for k in range(arms + 1)}
        for simultaneous in (False, True):
            apart = []
            for rep in range(reps):
                comps = _comps(round_robin(equal, 30, np.random.default_rng(rep)))
                report = elo_report(comps, anchor="arm0", intervals="sandwich",
                                    simultaneous=simultaneous)  # fmt: skip
                apart.append(any(not p["ci_low"] <= 1000 <= p["ci_high"] for p in report.players))
            how = "--simultaneous" if simultaneous else "one at a time"
            _row("some equal arm 'apart' from the anchor", f"{arms} arms, 30 tasks, {how}", reps,
                 apart, "<= 0.05" if simultaneous else "(reported)")  # fmt: skip


STUDIES = {"never-lose": never_lose, "cot": cot, "curves": curves,
           "elo-bootstrap": elo_bootstrap, "elo-bootstrap-variants": elo_bootstrap_variants,
           "multiplicity": multiplicity}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--only", choices=tuple(STUDIES))
    parser.add_argument("--first-seed", type=int, default=0, help="curves: first run's seed")
    parser.add_argument("--curve-tasks", default="6,10,30", help="curves: task counts, e.g. 10")
    args = parser.parse_args()
    global FIRST_SEED, CURVE_TASKS
    FIRST_SEED = args.first_seed
    CURVE_TASKS = tuple(int(t) for t in args.curve_tasks.split(","))
    print("| study | design | reps | rate ± MC s.e. | goal |")
    print("|---|---|---|---|---|")
    for name, study in STUDIES.items():
        if args.only in (None, name):
            study(args.reps)


if __name__ == "__main__":
    main()
