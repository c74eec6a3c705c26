"""The Elo report of comparisons files (and their ledgers): what ``eloledger elo`` prints and the
TUI's Elo tab shows, computed in one place so both faces give the same fit, intervals, costs,
latency and warnings for the same files."""

from __future__ import annotations

from typing import Any

DEFAULT_ROUNDS = 1000
DEFAULT_ROUNDS_MANY = 200  # each round costs O(players²): keep the default quick for big pools
MANY_PLAYERS = 300
BASE_COLUMNS = (
    ("name", "player", None),
    ("elo", "elo", 1),
    ("ci", "95% CI", None),
    ("rank", "rank", 0),
    ("rank_ci", "rank CI", None),
    ("games", "games", 0),
    ("wins", "wins", 1),
)
ELO_COST_COLUMNS = (
    ("tokens_per_task", "tok/task", 0),
    ("delta_elo", "d_elo", 1),
    ("delta_elo_per_1k", "d_elo/1k", 2),
    ("marginal_elo_per_1k", "marg/1k", 2),
    ("dominated", "dominated", None),
    ("frontier_share", "frontier", 2),
    ("elo_per_decade", "elo/decade", 1),
    ("raw_elo_per_1k", "raw/1k*", 2),
    ("pass_at_1", "pass@1", 3),
    ("sample_accuracy", "acc/sample", 3),
    ("pass_at_k", "pass@k", 3),
    ("pass_k", "k", 0),
    ("tokens_per_success", "tok/success", 0),
    ("latency_p95_ms", "p95 ms", 0),
    ("worth_it", "worth it", None),
)
CSV_KEYS = ("name", "elo", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "games", "wins")
LC_COLUMNS = (("lc_elo", "lc_elo", 1), ("lc_ci", "LC 95% CI", None))
LC_CSV_KEYS = ("lc_elo", "lc_ci_low", "lc_ci_high")


def ledger_costs(ledgers: Any, selection: dict[str, Any]) -> tuple[dict[str, Any], list[str], Any, Any]:
    """Per-arm billed tokens and solved sessions from one or several ledgers (each with its
    run's results file when present), what the reader warned about, each arm's latency, and
    the tasks ``selection`` keeps (None: all)."""
    if not selection:
        from eloledger.budget.outcomes import ledger_outcomes
        from eloledger.ledger.merge import read_ledgers
        from eloledger.ledger.summary import arm_latency

        columns = ("arm", "role", "status", "latency_ms")
        costs, warnings = ledger_outcomes(ledgers)
        return costs, warnings, arm_latency(read_ledgers(ledgers, columns=columns)), None
    from eloledger.budget.files import load_rows
    from eloledger.budget.gates import chosen_rows, latency_by_arm
    from eloledger.budget.outcomes import arm_outcomes, ledger_results

    rows, warnings = load_rows(ledgers)
    rows = chosen_rows(rows, selection["split"], selection["tags"], selection["tasks_file"])
    costs, more = arm_outcomes(rows, results=ledger_results(ledgers))
    kept = {str(r["task_id"]) for r in rows if r.get("task_id") is not None}
    return costs, [*warnings, *more], latency_by_arm(rows), kept


def elo_of_files(
    comparisons_path: Any,
    ledger_path: Any = None,
    *,
    selection: dict[str, Any] | None = None,
    anchor: str | None = None,
    bootstrap: int | None = None,
    intervals: str = "sandwich",
    seed: int = 0,
    prior: float = 0.0,
    task_weight: str = "none",
    length_control: bool = False,
    simultaneous: bool = False,
) -> Any:
    """The report for comparisons file(s) and optional ledger(s); arguments already checked."""
    from eloledger.errors import UserError
    from eloledger.rating.comparisons import keep_tasks, read_comparisons_many
    from eloledger.report.elo_table import elo_report

    comparisons = read_comparisons_many(comparisons_path)
    rounds = bootstrap
    if rounds is None:
        rounds = DEFAULT_ROUNDS if comparisons.n_players <= MANY_PLAYERS else DEFAULT_ROUNDS_MANY
    selection = selection or {}
    costs, ledger_warnings, latency = (None, [], {})
    if ledger_path:
        costs, ledger_warnings, latency, kept = ledger_costs(ledger_path, selection)
        if kept is not None:
            comparisons = keep_tasks(comparisons, kept)
    elif selection:
        raise UserError(
            "--split/--tag choose tasks by their ledger rows", fix="add --ledger LEDGER"
        )
    report = elo_report(
        comparisons,
        costs=costs,
        anchor=anchor,
        bootstrap_rounds=rounds,
        seed=seed,
        prior=prior,
        task_weight=task_weight,
        intervals=intervals,
        length_control=length_control,
        simultaneous=simultaneous,
    )
    report.warnings[:0] = ledger_warnings
    for player in report.players:  # p50/p95 latency per arm
        stats = latency.get(player["name"])
        if stats is not None:
            player["latency_p50_ms"], player["latency_p95_ms"] = stats["p50"], stats["p95"]
    if ledger_path:  # verdict-less LLM-judge calls are never silent ties
        from eloledger.judges.verdicts import verdict_counts, verdict_warning
        from eloledger.ledger.sources import expand_ledgers

        paths = [ledger_path] if isinstance(ledger_path, str) else ledger_path
        warning = verdict_warning(*verdict_counts(expand_ledgers(paths)))
        if warning:
            report.warnings.append(warning)
    return report


def cost_columns(report: Any, with_worth_it: bool = False) -> tuple[tuple[str, str, int | None], ...]:
    """The cost columns a report shows: worth-it only with a threshold, p95 only when timed."""
    timed = any(p.get("latency_p95_ms") is not None for p in report.players)
    return tuple(
        c
        for c in ELO_COST_COLUMNS
        if (c[0] != "worth_it" or with_worth_it) and (c[0] != "latency_p95_ms" or timed)
    )


def csv_text(report: Any, costs: tuple[tuple[str, str, int | None], ...] | None = None) -> str:
    """The report as CSV (``eloledger elo --format csv``; the TUI's CSV export is the same text):
    exact bounds as numbers, the cost columns named in ``costs`` (default: what it shows)."""
    from eloledger.tables import Column, render

    costs = cost_columns(report) if costs is None else costs
    lc = report.length_coef is not None
    spec = BASE_COLUMNS + (LC_COLUMNS if lc else ()) + (costs if report.has_costs else ())
    digits = {k: d for k, _, d in spec} | {
        "ci_low": 2,
        "ci_high": 2,
        "lc_ci_low": 2,
        "lc_ci_high": 2,
        "lc_elo": 2,
        "elo": 2,
        "delta_elo": 2,
        "elo_per_decade": 2,
        "wins": None,
    }
    keys = CSV_KEYS + (LC_CSV_KEYS if lc else ())
    keys += tuple(k for k, _, _ in costs if report.has_costs)
    cols = [Column(k, k, digits.get(k)) for k in keys]
    return render("csv", report.players, cols)
