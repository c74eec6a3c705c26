"""`eloledger demo`: the whole pipeline on the embedded simulator, without a key."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EPILOG = """\
examples:
  eloledger demo                         # in the terminal app (live counters, Elo tab)
  eloledger demo --headless              # progress on stderr, Elo-per-token table on stdout
  eloledger demo --headless --format json
  eloledger demo --print-spec > my-spec.toml   # the demo's spec, to copy and edit
  eloledger demo --agents --headless     # real Claude Code and Codex sessions on the simulator

The simulator is a fake model on 127.0.0.1: no key, no network, nothing billed. The demo
ledger, results and comparisons land in a fresh folder under eloledger's data directory
(printed at the end), or where --ledger says.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "demo",
        help="end to end on the embedded simulator: best-of-n vs self-consistency, Elo per token",
        description=(
            "Start the embedded simulator, run the built-in experiment (best_of_1, 2, 4, 8 and "
            "self-consistency over 5 samples on built-in arithmetic tasks), judge the answers, "
            "fit Bradley-Terry and print the Elo-per-token table. Takes about 10-20 seconds."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from eloledger.cli.run_cmd import add_run_options

    add_run_options(parser)
    parser.add_argument(
        "--print-spec", action="store_true", help="print the demo's spec (TOML) and exit"
    )
    parser.add_argument(
        "--agents",
        action="store_true",
        help="agent arms instead: the real Claude Code (2 vs 8 turns) and Codex (1 session vs "
        "best of 3) CLIs fix bugs on the simulator (needs scripts/install_clients.sh)",
    )
    parser.add_argument("--checkpoints", action="store_true", help="with --agents: checkpoints "
                        "inside sessions on scored tasks vs a k-shot chat arm, then the budget curves")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if getattr(args, "agents", False):
        return _agents(args)
    if args.print_spec:
        from eloledger.runner.demo import demo_spec_text

        sys.stdout.write(demo_spec_text())
        return 0
    from eloledger.cli.run_cmd import execute, open_tui
    from eloledger.runner.demo import demo_spec_path, fresh_demo_ledger
    from eloledger.runner.spec import load_spec

    ledger = Path(args.ledger) if args.ledger else fresh_demo_ledger()
    spec = load_spec(demo_spec_path(), ledger=ledger)
    if not args.headless:
        status = open_tui(spec=spec, demo=True)
        if status is not None:
            return status
    _say(
        "eloledger: demo on the embedded simulator (a fake model on 127.0.0.1; no key, "
        f"nothing billed): {len(spec.arms)} arms, ledger {spec.ledger}"
    )
    return execute(spec, args)


def _agents(args: argparse.Namespace) -> int:
    from eloledger.runner.agent_demo import agents_spec_path, require_demo_clis

    if getattr(args, "checkpoints", False):  # eloledger.cli.demo_checkpoints
        from eloledger.cli.demo_checkpoints import run_demo

        return run_demo(args)
    if args.print_spec:
        sys.stdout.write(agents_spec_path().read_text(encoding="utf-8"))
        return 0
    require_demo_clis()
    from eloledger.cli.run_cmd import execute, open_tui
    from eloledger.runner.demo import fresh_demo_ledger
    from eloledger.runner.spec import load_spec

    ledger = (
        Path(args.ledger)
        if args.ledger
        else fresh_demo_ledger().with_name("demo-agents.ledger.jsonl")
    )
    spec = load_spec(agents_spec_path(), ledger=ledger)
    if not args.headless:
        status = open_tui(spec=spec)
        if status is not None:
            return status
    _say(
        "eloledger: agent demo on the embedded simulator (real Claude Code and Codex sessions "
        f"against a fake model on 127.0.0.1; no key, nothing billed): {len(spec.arms)} arms, "
        f"ledger {spec.ledger}"
    )
    return execute(spec, args)


def _say(line: str) -> None:
    """A line on stderr, wrapped between words on a terminal (a path stays whole)."""
    from eloledger.tables import fill, terminal_width

    print(fill(line, terminal_width(sys.stderr), hang="  "), file=sys.stderr)
