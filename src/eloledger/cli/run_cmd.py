"""`eloledger run SPEC`: run an experiment spec, then print the Elo-per-token table."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from typing import Any

from eloledger.cli.options import add_format_option
from eloledger.cli.warn import warn
from eloledger.textsafe import visible

EPILOG = """\
examples:
  eloledger demo --print-spec > my-spec.toml   # start from the demo's spec
  eloledger run my-spec.toml --headless        # progress on stderr, table on stdout
  eloledger run my-spec.toml --headless --format json > result.json
  eloledger run my-spec.toml --headless --resume   # after a crash or Ctrl-C: only missing calls
  eloledger run my-spec.toml --ledger runs/today.jsonl
  eloledger run my-spec.toml --headless --shard 2/8   # slice 2 of 8 (Slurm array, k8s Job)

files written next to the ledger:
  <name>.ledger.jsonl       one row per call attempt (tokens, latency, status, score)
  <name>.results.csv        each arm's pick per task and session, with its score
  <name>.comparisons.csv    task_id,a,b,outcome: the input of 'eloledger elo'

exit status: 0 a result; 1 ran but produced nothing usable (cause on stderr: an arm with no
successful call, judge replies without a verdict); 2 a mistake in the input (spec, tasks,
ledger path); 130 interrupted (the ledger is whole: --resume finishes the run)
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "run",
        help="run an experiment spec (arms x tasks), judge, print Elo per token",
        description=(
            "Sample every task under every arm of a TOML experiment spec through a profile's "
            "gateway (or the embedded simulator), write every call to the token ledger, judge "
            "the answers within each task and print Elo, tokens per task and Elo per 1K tokens."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("spec", metavar="SPEC", help="experiment spec (TOML, or YAML: .yaml/.yml)")
    add_run_options(parser)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="complete the run recorded in the ledger: make only the calls it lacks",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run only slice I of N (whole tasks, dealt round robin) into its own "
        "ledger <name>.shard-I-of-N.ledger.jsonl; the shards' ledgers merge on read",
    )
    parser.set_defaults(handler=handle)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--headless", action="store_true", help="no terminal app: progress lines on stderr"
    )
    parser.add_argument("--ledger", metavar="PATH", help="ledger file (overrides the spec's)")
    add_format_option(parser)
    from eloledger.cli.options import INTERVALS, add_wide_option

    parser.add_argument(
        "--intervals",
        choices=INTERVALS,
        default=None,
        help="how the 95%% Elo and rank intervals are made (default: sandwich, the "
        "task-clustered intervals 'eloledger elo' prints for the same files)",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        metavar="N",
        help="opt in to N task-bootstrap rounds instead of the sandwich (0 = no intervals)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--anchor",
        metavar="ARM",
        help="the arm at 1000 Elo (default: [experiment] anchor, else the arm named "
        "'baseline', else the spec's first arm)",
    )
    add_wide_option(parser)


def handle(args: argparse.Namespace) -> int:
    from eloledger.runner.spec import load_spec

    spec = load_spec(args.spec, ledger=args.ledger)
    if getattr(args, "shard", None) is not None:
        from eloledger.runner.shard import parse_shard, shard_ledger

        args.shard = parse_shard(args.shard)
        if not args.ledger:
            spec.ledger = shard_ledger(spec.ledger, args.shard)
        args.headless = True  # a slice is a batch job: no terminal app
    if not args.headless:
        status = open_tui(spec=spec, resume=args.resume)
        if status is not None:
            return status
    return execute(spec, args, resume=args.resume)


def open_tui(**kwargs: Any) -> int | None:
    """Run in the terminal app when it is there and stdout is a terminal; None = run headless."""
    if not sys.stdout.isatty():
        return None
    try:
        from eloledger.tui.app import run_tui
    except ImportError:
        print("eloledger: the terminal app is not available; running headless", file=sys.stderr)
        return None
    wanted = {k: v for k, v in kwargs.items() if v not in (None, False)}
    import inspect

    accepted = inspect.signature(run_tui).parameters
    missing = [k for k in wanted if k not in accepted]
    if missing:
        print(
            f"eloledger: the terminal app cannot take {', '.join(missing)} yet; running headless",
            file=sys.stderr,
        )
        return None
    return int(run_tui(**wanted) or 0)


def execute(spec: Any, args: argparse.Namespace, *, resume: bool = False) -> int:
    """Run headless, then print the Elo table (same core as 'eloledger elo')."""
    from eloledger.runner.counters import RunCounters
    from eloledger.runner.progress import progress_line, report_progress
    from eloledger.runner.run import run_experiment
    from eloledger.tables import fill, terminal_width

    check_interval_options(args)
    args.elo_anchor = _chosen_anchor(spec, args)  # refused before a call is made
    counters = RunCounters()

    async def main() -> Any:
        reporter = None
        if not args.quiet:
            reporter = asyncio.create_task(report_progress(counters, sys.stderr, 1.0))
        cancel = asyncio.Event()
        try:
            with stop_on_ctrl_c(cancel):
                return await run_experiment(
                    spec,
                    counters=counters,
                    resume=resume,
                    shard=getattr(args, "shard", None),
                    cancel=cancel,
                )
        finally:
            if reporter is not None:
                reporter.cancel()

    interrupted = (
        f"eloledger: interrupted; the ledger {spec.ledger} is intact: "
        "add --resume to finish the run"
    )
    try:
        result = asyncio.run(main())
    except KeyboardInterrupt:
        print(interrupted, file=sys.stderr)
        return 130
    if result.stopped == "cancelled":  # ctrl-C: no new call started after the key
        print(interrupted, file=sys.stderr)
        return 130
    if not args.quiet:
        print(progress_line(counters, terminal_width(sys.stderr)), file=sys.stderr)
    width = terminal_width(sys.stderr)  # a terminal's lines wrap between words, paths whole
    summary = "\n".join(fill(line, width, hang="  ") for line in _run_summary(result).split("\n"))
    print(summary, file=sys.stderr)
    from eloledger import history  # one line per run in the run index

    entry, warning = history.index_run(result, spec)
    if warning is not None:
        warn(warning)
    status = report(result, args)
    lines, failed = history.gate_lines(entry)  # the spec's [gates]: last, where CI logs end
    for line in lines:
        print(visible(f"eloledger: {line}"), file=sys.stderr)
    return 1 if failed else status


@contextlib.contextmanager
def stop_on_ctrl_c(cancel: asyncio.Event) -> Iterator[None]:
    """Ctrl-C sets the run's ``cancel`` event at once, so no new call starts after the key.

    asyncio.run's own handler only cancels the main task, and a worker whose cancellation is
    lost (a call finishing in the same loop pass) went on taking calls until the run was done.
    A second ctrl-C interrupts as before. A shell's background job (SIGINT ignored) is left so.
    """
    loop = asyncio.get_running_loop()
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield
        return

    def on_sigint() -> None:
        if cancel.is_set():  # the second key: stop waiting for in-flight calls
            loop.remove_signal_handler(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            return
        cancel.set()  # in-flight calls are cancelled; the one line on how to resume follows

    previous = signal.getsignal(signal.SIGINT)  # asyncio.run's own, put back afterwards
    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (ValueError, RuntimeError):  # not the main thread: asyncio.run's handling stays
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, previous)


def _chosen_anchor(spec: Any, args: argparse.Namespace) -> tuple[str | None, bool]:
    """The Elo anchor (``--anchor``, the spec's, or the baseline) and whether it was asked for:
    the guides read every arm against the baseline, not against the cheapest arm."""
    from eloledger.errors import UserError

    asked = getattr(args, "anchor", None)
    if asked is None:
        return spec.elo_anchor(), spec.anchor is not None
    if asked not in {a.name for a in spec.arms}:
        raise UserError(
            f"--anchor {asked!r}: not an arm of the spec",
            fix=f"use one of {', '.join(a.name for a in spec.arms)}",
        )
    return asked, True


def check_interval_options(args: argparse.Namespace) -> None:
    """Refuse a bad --bootstrap/--intervals before the run, not after its calls are spent."""
    from eloledger.cli.options import interval_method
    from eloledger.errors import UserError

    rounds = getattr(args, "bootstrap", None)
    if rounds is not None and rounds < 0:
        raise UserError(f"--bootstrap {rounds}: must be >= 0", fix="e.g. --bootstrap 1000")
    interval_method(
        argparse.Namespace(intervals=getattr(args, "intervals", None), bootstrap=rounds)
    )


# How a run ended, as words before its duration ("run X errors in 0.1s" read as a count).
STOPPED_WORDS = {
    "completed": "completed in",
    "budget": "stopped at the token budget after",
    "cancelled": "cancelled after",
    "errors": "stopped on repeated errors after",
}


def _run_summary(result: Any) -> str:
    from eloledger.words import plural

    how = STOPPED_WORDS.get(result.stopped, f"{result.stopped} after")
    lines = [
        f"eloledger: run {result.run_id} {how} {result.elapsed_s:.1f}s: "
        f"{plural(result.attempts, 'call')} made, {result.retries} retried, "
        f"{result.resumed_calls} already in the ledger, {result.not_run} not made; "
        f"arm tokens {result.arm_tokens:,}, judge tokens {result.judge_tokens:,}",
        f"eloledger: ledger {result.ledger_path}",
    ]
    if result.comparisons_path:
        lines.append(
            f"eloledger: comparisons {result.comparisons_path} "
            f"({plural(result.comparisons, 'pair')})"
        )
    for arm in result.arms:  # the prompt setup behind each row's prompt_hash, once per run
        if arm.get("prompt_hash"):
            text = " ".join(
                f"{key} {json.dumps(arm[key], ensure_ascii=False)}"
                for key in ("system", "prompt_template")
                if arm.get(key) is not None
            )
            lines.append(
                visible(f"eloledger: arm {arm['arm']} prompt {arm['prompt_hash']}: {text}")
            )
    lines.extend(f"eloledger: {n}" for n in getattr(result, "notes", []))
    lines.extend(visible(f"eloledger: warning: {w}") for w in result.warnings[:20])
    lines.extend(f"eloledger: error: {f}" for f in result.failures)
    return "\n".join(lines)


def report(result: Any, args: argparse.Namespace) -> int:
    """The Elo table from the comparisons + ledger, plus per-arm call statistics."""
    from eloledger.tables import Column, render, table_width, to_json

    arms_cols = [
        Column("arm", "arm"),
        Column("kind", "kind"),
        Column("n", "n"),
        Column("max_tokens", "max_tokens", drop=2),
        Column("calls", "calls", group=True),
        Column("errors", "errors", group=True),
        Column("tokens", "tokens", group=True),
        # latency on the run's own lines; p50 still fits 80 columns
        Column("latency_p50_ms", "p50 ms", 0, drop=1),
        Column("latency_p95_ms", "p95 ms", 0, drop=3),
        Column("length_rate", "length%", 1),
    ]
    if any(a.get("judge_no_verdict") for a in result.arms):
        arms_cols.append(Column("judge_no_verdict", "no verdict", group=True))
    arms = [
        {**a, "length_rate": None if a["length_rate"] is None else 100 * a["length_rate"]}
        if a.get("kind") != "agent"
        else {**a, "max_tokens": "-", "length_rate": "-"}  # meaningless for a CLI session
        for a in result.arms
    ]
    elo_text, elo_payload, status = _elo(result, args)
    run_info = {
        "run_id": result.run_id,
        "experiment": result.experiment,
        "stopped": result.stopped,
        "ledger": str(result.ledger_path),
        "comparisons": str(result.comparisons_path) if result.comparisons_path else None,
        "results": str(result.results_path) if result.results_path else None,
        "calls_made": result.attempts,
        "retries": result.retries,
        "resumed_calls": result.resumed_calls,
        "not_run": result.not_run,
        "judge_calls": result.judge_calls,
        "arm_tokens": result.arm_tokens,
        "judge_tokens": result.judge_tokens,
        "judge_no_verdict": result.judge_no_verdict_pairs,
        "judged_by": result.judged_by,
        "failures": result.failures,
        "elapsed_s": round(result.elapsed_s, 3),
    }
    if result.failures:
        status = 1  # ran, but produced nothing usable (the causes are on stderr)
    if args.format == "json":
        payload = (
            elo_payload
            if elo_payload is not None
            else {"players": [], "anchor": None, "warnings": []}
        )
        payload.setdefault("warnings", [])
        own = [w for w in result.warnings if w not in payload["warnings"]]
        payload["warnings"] = list(payload["warnings"]) + own
        payload["run"] = run_info
        payload["arms"] = result.arms
        print(to_json(payload))
        return status
    if elo_text:
        print(elo_text.rstrip("\n"))
        print()
    print(render("table", arms, arms_cols, width=table_width(getattr(args, "wide", False))))
    print("length% = share of ok calls cut by max_tokens (finish_reason = length)")
    return status


def _elo(result: Any, args: argparse.Namespace) -> tuple[str | None, dict | None, int]:
    """What 'eloledger elo' shows for the run's files (same core, same output)."""
    from eloledger.errors import UserError

    if not result.comparisons_path or not result.comparisons:
        why = "see the errors above" if result.failures else "one arm, or nothing finished"
        print(f"eloledger: no comparisons ({why}): no Elo table", file=sys.stderr)
        return None, None, 0 if result.stopped == "completed" else 1
    from eloledger.cli import elo_cmd

    anchor, asked = getattr(args, "elo_anchor", (None, False))
    ns = argparse.Namespace(
        comparisons=str(result.comparisons_path),
        ledger=str(result.ledger_path),
        anchor=anchor if asked else None,
        default_anchor=None if asked else anchor,  # used when that arm was compared
        # the same defaults as 'eloledger elo', so both print the same intervals
        intervals=getattr(args, "intervals", None),
        bootstrap=getattr(args, "bootstrap", None),
        seed=0,
        prior=0.0,
        task_weight="none",
        format="json" if args.format == "json" else "table",
        example=False,
        wide=getattr(args, "wide", False),
    )
    try:
        report = elo_cmd.compute(ns)
    except UserError as exc:
        warn(f"no Elo table: {exc.one_line()}")
        return None, None, 1
    if args.format == "json":
        return None, report.to_json(), 0
    for warning in report.warnings:
        if warning not in result.warnings:  # the run summary printed those already
            warn(warning)
    return elo_cmd.render_text(report, ns), None, 0
