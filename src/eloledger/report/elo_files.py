"""The Elo report of comparisons files (and their ledgers): what ``eloledger elo`` prints and the
TUI's Elo tab shows, computed in one place so both faces give the same fit, intervals, costs,
latency and warnings for the same files."""

from __future__ import annotations

from typing import Any

from eloledger.report.elo_columns import EloColumn, cost_columns, elo_columns

DEFAULT_ROUNDS = 1000
DEFAULT_ROUNDS_MANY = 200  # each round costs O(players²): keep the default quick for big pools
MANY_PLAYERS = 300
CSV_KEYS = ("name", "elo", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "games", "wins")
LC_CSV_KEYS = ("lc_elo", "lc_ci_low", "lc_ci_high")


def ledger_costs(
    ledgers: Any, selection: dict[str, Any]
) -> tuple[dict[str, Any], list[str], Any, Any]:
    """Per-arm billed tokens and solved sessions from one or several ledgers (each with its
    run's results file when present), what the reader warned about, each arm's latency, and
    the tasks ``selection`` keeps (None: all)."""
    if not selection:
        from eloledger.budget.outcomes import OUTCOME_COLUMNS, outcomes_of_ledger
        from eloledger.ledger.merge import read_ledgers
        from eloledger.ledger.summary import arm_latency

        ledger = read_ledgers(ledgers, columns=(*OUTCOME_COLUMNS, "latency_ms"))  # read once
        costs, warnings = outcomes_of_ledger(ledger, ledgers)
        return costs, warnings, arm_latency(ledger), None
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
    default_anchor: str | None = None,
    bootstrap: int | None = None,
    intervals: str = "sandwich",
    seed: int = 0,
    prior: float = 0.0,
    task_weight: str = "none",
    length_control: bool = False,
    simultaneous: bool = False,
) -> Any:
    """The report for comparisons file(s) and optional ledger(s); arguments already checked.

    ``anchor`` must be a player; ``default_anchor`` (a run's baseline) anchors the table only
    when it took part in a comparison, else the table picks its own (the cheapest arm)."""
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
    if anchor is None and default_anchor in comparisons.players:
        anchor = default_anchor
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


def elo_of_run(comparisons_path: Any, ledger_path: Any, spec: Any, **options: Any) -> Any:
    """A finished run's report, anchored as ``eloledger run`` and ``demo`` anchor it (the TUI's
    Elo tab after a run calls this too): at the spec's ``[experiment] anchor``, which must have
    been compared, else at its baseline (``spec.elo_anchor()``: the arm named ``baseline``, else
    the first arm) when that arm was compared, else at the table's own pick. The guides read
    every arm against the baseline, not against whichever arm happened to be cheapest."""
    return elo_of_files(
        comparisons_path,
        ledger_path,
        anchor=spec.anchor,
        default_anchor=spec.elo_anchor(),
        **options,
    )


def csv_text(report: Any, costs: tuple[EloColumn, ...] | None = None) -> str:
    """The report as CSV (``eloledger elo --format csv``; the TUI's CSV export is the same text):
    exact bounds as numbers, the cost columns named in ``costs`` (default: what it shows)."""
    from eloledger.tables import Column, render

    costs = cost_columns(report) if costs is None else costs
    lc = report.length_coef is not None
    digits = {c.key: c.digits for c in elo_columns(report) + costs} | {
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
    keys += tuple(c.key for c in costs if report.has_costs)
    cols = [Column(k, k, digits.get(k)) for k in keys]
    return render("csv", report.players, cols)
