"""`eloledger fairness`: real improvement or budget leakage? A verdict for the four-arm design."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from eloledger.cli.options import add_format_option, add_selection_args
from eloledger.cli.warn import warn

EPILOG = """\
examples:
  eloledger fairness runs/ledger.jsonl --old-1 base_1 --new-1 cot_1 --old-n base_8 --new-n cot_8
  eloledger fairness runs/ledger.jsonl --old-1 a1 --new-1 b1 --old-n a8 --new-n b8 \\
      --bootstrap 5000 --seed 7 --format json > verdict.json   # archive next to the run

four-arm design: the old and the new method, each with single samples (n=1) and with
N-way sampling (n=N). pass rates count the answer each arm submits, one per session
(the run's .results.csv beside the ledger says which sample that was); tokens are billed
tokens (failed calls with usage included); tok/success = tokens per solved task, as in
`eloledger elo --ledger`. Paired task-level bootstrap intervals (95%, and 90% for the
equivalence test) for:
  pass1_delta               pass@1(new_1) - pass@1(old_1): the gain at n=1
  tokens_per_success_*      new_1 versus old_1 (delta and ratio; ratio of sums)
  token_ratio_1             tokens(new_1) / tokens(old_1): is it really the same budget?
  passN_delta               pass@N(new_n) - pass@N(old_n)
  token_ratio_n             tokens(new_n) / tokens(old_n)   (samples_ratio_n likewise)
  matched_passk_delta       the N-way arms at a matched budget: old_n's unbiased pass@k
                            against new_n's at the real number of samples the same tokens
                            buy (pass@k interpolated between whole k; never rounded down)
  bought_delta              passN_delta - matched_passk_delta: the part of the N-way gain
                            the extra budget buys (bought_over_kept: bought - kept)
  interaction               passN_delta - pass1_delta

decision rule (the guide's two comparisons; "comparisons" in the JSON says which hold):
  real_evolution    B over A: pass1_delta CI above 0 with tokens per success (n=1) at most
                    1 + tolerance times the old (default +10%), AND D over C: passN_delta
                    CI above 0, and new_n not shown worse at the matched budget
  budget_leakage    passN_delta CI above 0, new_n spent >= 1.5x old_n's tokens or samples,
                    pass@1 not shown better, and either more of the N-way gain bought than
                    kept (bought_over_kept CI above 0) with the matched-budget change below
                    what a 5 pp per-sample gain would give there (one-sided 95%) and pass@1
                    below +10 pp (95%), or pass@1 and the matched change both equivalent to
                    0 within +-margin (two one-sided tests, Schuirmann 1987)
  inconclusive      anything else: which comparison holds, and what the design detects
                    at 80% power

gates (--gates FILE): min_same_budget_gain passes when the n=1 gain is at least the
threshold and its 95% CI excludes 0 (the guide's reading); --gain-rule lower_bound (or
min_same_budget_gain_rule = "lower_bound") asks the CI's lower end to reach it instead.
--record memory prints the guide's memory entry (memory_id, type, decision
promote_to_skill | do_not_promote, pattern, verdict, same_budget_delta, ...).
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "fairness",
        help="real improvement or budget leakage? verdict for old/new x n=1/n=N arms",
        description=(
            "Compare an old and a new method run at n=1 and n=N with paired task-level "
            "bootstrap intervals, and decide whether the new method really improves or only "
            "wins by spending more tokens or samples. Prints an archivable JSON record."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "ledger",
        metavar="LEDGER",
        nargs="+",
        help="token ledger (JSONL) with passed/score; several files, a glob or a folder merge",
    )
    for flag, what in (
        ("--old-1", "old method, single samples"),
        ("--new-1", "new method, single samples"),
        ("--old-n", "old method, N-way sampling"),
        ("--new-n", "new method, N-way sampling"),
    ):
        parser.add_argument(
            flag, metavar="ARM", help=f"arm name: {what} (default: the gates' arms table)"
        )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        metavar="N",
        help="bootstrap rounds (default: the gates' bootstrap_rounds, else 2000)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="bootstrap seed (default 0)"
    )
    parser.add_argument(
        "--pass-threshold",
        type=float,
        default=0.5,
        metavar="X",
        help="without 'passed', a row passes when score >= X (default 0.5)",
    )
    parser.add_argument(
        "--tps-tolerance",
        type=float,
        default=0.10,
        metavar="F",
        help="allowed rise in tokens per success for a real improvement (default 0.10)",
    )
    parser.add_argument(
        "--leak-ratio",
        type=float,
        default=1.5,
        metavar="R",
        help="token or sample ratio new_n/old_n that counts as spending more (default 1.5)",
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=0.05,
        metavar="M",
        help="equivalence margin of 'no gain at n=1', in pass rate (default 0.05 = 5 pp)",
    )
    parser.add_argument(
        "--gates",
        metavar="FILE",
        help="TOML gate file or spec with a [gates] table: exit 0 all pass, 1 a gate fails",
    )
    parser.add_argument(
        "--gain-rule",
        choices=("guide", "lower_bound"),
        default=None,
        help="how min_same_budget_gain reads the n=1 gain: guide (point >= threshold, CI "
        "excludes 0; default) or lower_bound (CI lower end >= threshold)",
    )
    add_selection_args(parser)
    parser.add_argument(
        "--tuned-on",
        metavar="SPLIT",
        help="the split the candidates were tuned on (else the spec's [tasks] tuned_on)",
    )
    parser.add_argument(
        "--record",
        choices=("full", "memory"),
        default="full",
        help="JSON record: the full verdict (default) or the guide's memory entry",
    )
    add_format_option(
        parser,
        default=None,
        help="output format (default: table on a terminal, json when piped or redirected)",
    )
    parser.set_defaults(handler=handle)


def _same_arms(arms: dict[str, str | None]) -> tuple[str | None, list[str]]:
    """An arm on both the old and the new side (refused: every gate then compares it with
    itself), and warnings for one arm as a side's single and N-way arm (the N-way gates then
    measure the single-sample arm again)."""
    flags = {role: f"--{role.replace('_', '-')}" for role in arms}
    for old in ("old_1", "old_n"):
        for new in ("new_1", "new_n"):
            if arms[old] == arms[new]:
                return f"{flags[old]} and {flags[new]} are both {arms[old]!r}", []
    warnings = [
        f"{flags[one]} and {flags[many]} are both {arms[one]!r}: the N-way gates measure the "
        "single-sample arm again"
        for one, many in (("old_1", "old_n"), ("new_1", "new_n"))
        if arms[one] == arms[many]
    ]
    return None, warnings


def handle(args: argparse.Namespace) -> int:
    from eloledger.budget.files import fairness_record
    from eloledger.errors import UserError
    from eloledger.tables import to_json

    for flag, value in (
        ("--pass-threshold", args.pass_threshold),
        ("--tps-tolerance", args.tps_tolerance),
        ("--leak-ratio", args.leak_ratio),
    ):
        if not math.isfinite(value) or value < 0:
            raise UserError(
                f"{flag} {value}: must be a finite number >= 0", fix=f"see {flag} in --help"
            )
    from eloledger.budget.gates import gates_pass, load_gates, memory_entry

    gates = load_gates(args.gates) if args.gates else None
    if args.gain_rule is not None:
        if gates is None or gates.min_same_budget_gain is None:
            raise UserError(
                "fairness: --gain-rule needs a min_same_budget_gain gate",
                fix="give --gates a file with min_same_budget_gain = 0.08 (for example)",
            )
        gates.min_same_budget_gain_rule = args.gain_rule
    arms = {"old_1": args.old_1, "new_1": args.new_1, "old_n": args.old_n, "new_n": args.new_n}
    arms = {role: name or (gates.arms.get(role) if gates else None) for role, name in arms.items()}
    missing = [f"--{role.replace('_', '-')}" for role, name in arms.items() if not name]
    if missing:
        raise UserError(
            f"fairness: {', '.join(missing)} not given",
            fix="name the four arms, or give --gates a file whose [gates] has "
            'arms = {old_1 = "…", new_1 = "…", old_n = "…", new_n = "…"}',
        )
    same, repeated = _same_arms(arms)
    if same:
        raise UserError(
            f"fairness: {same}: an arm measured against itself says nothing (every gate "
            "compares the new method with the old)",
            fix="name different arms for the old and the new side (eloledger tokens LEDGER "
            "lists them)",
        )
    for warning in repeated:
        warn(warning)
    extra = {"bootstrap": args.bootstrap} if args.bootstrap is not None else {}
    record = fairness_record(
        args.ledger,
        arms,
        split=args.split,
        tags=args.tag or (),
        tasks_file=args.tasks,
        gates=gates,
        tuned_on=args.tuned_on,
        **extra,
        seed=args.seed,
        pass_threshold=args.pass_threshold,
        tps_tolerance=args.tps_tolerance,
        leak_ratio=args.leak_ratio,
        margin=args.margin,
    )
    status = 0 if gates_pass(record) else 1
    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    if args.record == "memory":
        from eloledger.budget.files import load_rows

        entry = memory_entry(record, load_rows(args.ledger)[0])
        print(to_json(entry) if fmt == "json" else render_memory(entry))
        return status
    if fmt == "json":
        print(to_json(record))
        return status
    for warning in record["warnings"]:
        warn(warning)
    print(render_table(record))
    return status


def render_memory(entry: dict[str, Any]) -> str:
    """The memory entry as ``key  value`` lines, values wrapped under themselves (the JSON,
    ``--format json``, is what a memory system reads)."""
    import json

    from eloledger.tables import fill, terminal_width, visible

    width = terminal_width()
    pad = max(len(key) for key in entry) + 2
    lines = []
    for key, value in entry.items():
        if isinstance(value, list):
            text = ", ".join(map(str, value)) or "(none)"
        else:
            text = value if isinstance(value, str) else json.dumps(value)  # true, null, 0.11
        head = key.ljust(pad)
        lines.append(fill(visible(head + text), width, hang=" " * pad) if width else head + text)
    return "\n".join(lines)


def render_table(record: dict[str, Any]) -> str:
    from functools import partial

    from eloledger.tables import Column, terminal_width, wrap
    from eloledger.tables import render_table as table_text

    width = terminal_width()
    table = partial(table_text, width=width)

    metric_rows = [
        {"metric": name, **values, "ci": _ci(values)} for name, values in record["metrics"].items()
    ]
    arm_rows = [{"role": role, **arm} for role, arm in record["arms"].items()]
    parts = [
        f"verdict: {record['verdict']}",
        f"reason:  {record['reason']}",
        *_comparison_parts(record, table),
        *_decision_parts(record),
        "",
        table(
            metric_rows,
            [Column("metric", "metric"), Column("estimate", "estimate", 4), Column("ci", "95% CI")],
        ),
        "",
        table(
            arm_rows,
            [
                Column("role", "role"),
                Column("name", "arm"),
                Column("attempts", "attempts"),
                Column("pass_rate", "pass@1", 3),
                Column("samples", "samples"),
                Column("tokens", "tokens", 0),
                Column("tokens_per_success", "tok/success", 0),
            ],
        ),
        *_gate_parts(record, table),
        "",
        f"tasks: {record['tasks']['used']} (dropped {record['tasks']['dropped']}); "
        f"bootstrap {record['inputs']['bootstrap']} rounds, seed {record['inputs']['seed']}; "
        + _ledger_text(record["ledger"]),
        f"rule: {record['rule']}",
    ]
    return "\n".join(wrap(part, width) if "\n" not in part else part for part in parts)


def _comparison_parts(record: dict[str, Any], table: Any) -> list[str]:
    """The guide's two comparisons and the matched budget: estimate, interval, holds."""
    from eloledger.tables import Column

    comp = record.get("comparisons")
    if not comp:
        return []
    labels = (
        ("n1", "B over A at n=1 (pass@1)"),
        ("n_way", "D over C at N (pass@N)"),
        ("matched_budget", "D over C at old_n's budget"),
    )
    rows = []
    for key, label in labels:
        c = comp[key]
        low, high = c["ci95"]
        rows.append({
            "comparison": label,
            "estimate": c["estimate"],
            "ci": "" if low is None or high is None else f"[{low:.4f}, {high:.4f}]",
            "holds": "yes" if c["holds"] else ("worse" if c.get("worse") else "no"),
        })  # fmt: skip
    columns = [
        Column("comparison", "comparison"), Column("estimate", "estimate", 4),
        Column("ci", "95% CI"), Column("holds", "holds"),
    ]  # fmt: skip
    return ["", table(rows, columns)]


def _decision_parts(record: dict[str, Any]) -> list[str]:
    """The guide's decision keys in one short block (the JSON has them all)."""
    same = record.get("same_budget")
    if not same:
        return []
    low, high = same["ci95"]
    ci = "?" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
    budget = same.get("budget")
    on = record.get("bestofn_on", {})
    ratio = on.get("total_tokens_ratio")

    def num(value: Any, spec: str) -> str:
        return "?" if value is None else format(value, spec)

    return [
        "",
        f"same_budget: budget {num(budget, '.0f')} tokens/task, baseline "
        f"{num(same['baseline_pass'], '.3f')}, candidate {num(same['candidate_pass'], '.3f')}, "
        f"delta {num(same['delta'], '+.3f')}, ci95 {ci}",
        f"bestofn_off: n=1, delta {num(record['bestofn_off']['delta'], '+.3f')}; bestofn_on: "
        f"n={on.get('n')}, delta {num(on.get('delta'), '+.3f')}, total_tokens_ratio "
        f"{num(ratio, '.2f')}",
    ]


def _gate_parts(record: dict[str, Any], table: Any) -> list[str]:
    """The gates (value, threshold, pass/fail), the regressed tasks and the strata."""
    from eloledger.tables import Column

    parts: list[str] = []
    if record.get("tuned_on_warning"):
        parts += ["", f"!! {record['tuned_on_warning']}"]
    if record.get("gates"):
        rows = [
            {
                **g,
                "threshold": f"{g['op']} {g['threshold']:g}",
                "result": "PASS" if g["pass"] else "FAIL",
                "note": g["note"] if len(g["note"]) <= 32 else g["note"][:31] + "…",
            }  # fmt: skip
            for g in record["gates"]
        ]
        verdict = "all gates pass" if all(g["pass"] for g in record["gates"]) else "GATE FAILED"
        parts += [
            "",
            table(
                rows,
                [
                    Column("gate", "gate"),
                    Column("value", "value", 4),
                    Column("threshold", "threshold"),
                    Column("result", "result"),
                    Column("note", "note"),
                ],
            ),  # fmt: skip
            f"gates: {verdict}",
        ]
        if record.get("regressions"):
            named = ", ".join(
                f"{t} ({', '.join(record['regression_strata'].get(t) or ['untagged'])})"
                for t in record["regressions"]
            )
            parts.append(f"regressed (solved by the baseline, failed by the candidate): {named}")
    if record.get("strata"):
        rows = [
            {"tag": tag, **s, "ci": f"[{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"}
            for tag, s in record["strata"].items()
        ]
        parts += ["", table(rows, [Column("tag", "stratum"), Column("n", "tasks"), Column("baseline_pass", "baseline", 3), Column("candidate_pass", "candidate", 3), Column("delta", "delta", 3), Column("ci", "95% CI")])]  # fmt: skip
    return parts


def _ledger_text(ledger: dict[str, Any]) -> str:
    """'ledger sha256 abc…', or one short hash per file when several ledgers were merged
    (the record then holds ``files``, not ``sha256``)."""
    files = ledger.get("files") or [ledger]
    hashes = ", ".join(str(f.get("sha256", "?"))[:12] for f in files)
    return f"ledger sha256 {hashes}" if len(files) == 1 else f"{len(files)} ledgers sha256 {hashes}"


def _ci(values: dict[str, Any]) -> str:
    low, high = values.get("ci_low"), values.get("ci_high")
    if low is None or high is None:
        return ""
    return f"[{low:.4f}, {high:.4f}]"
