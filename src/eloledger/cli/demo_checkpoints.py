"""``eloledger demo --agents --checkpoints``: agent sessions with checkpoints vs k-shot sampling.

Two runs into one ledger: first the agent arms of data/demo/checkpoints.toml (the real Claude
Code and Codex CLIs that are installed; at least one is needed), each session snapshotted on a
1.5x token grid and every snapshot judged; then, resumed, the same spec plus a k-shot chat arm
(``best_of_n`` with ``same_budget``) whose ``[budget] per_task_tokens`` is what the agent
sessions were measured to spend per task, with k chosen so its k replies spend about that much.
Then the ``curve`` command's own code prints the budget curves of the ledger.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

from eloledger.errors import UserError

CHAT_OUT_TOKENS = 40  # about what the simulator's one-shot answer to these tasks spends
MAX_K = 16  # each reply is judged in the sandbox: 128 x 8 tasks took minutes on two cores


def spec_path() -> Path:
    from importlib.resources import files

    return Path(str(files("eloledger") / "data" / "demo" / "checkpoints.toml"))


def run_demo(args: argparse.Namespace) -> int:
    """The demo (see the module docstring); exit status of the runs, then the curve."""
    import tomlkit

    from eloledger.runner.agent_clis import find_cli
    from eloledger.runner.agent_demo import DEMO_AGENTS, require_demo_clis
    from eloledger.runner.demo import fresh_demo_ledger

    text = spec_path().read_text(encoding="utf-8")
    if args.print_spec:
        sys.stdout.write(text)
        return 0
    doc = tomlkit.parse(text)
    installed = [a for a in DEMO_AGENTS if find_cli(a) is not None]
    if not installed:
        require_demo_clis()  # names both CLIs and the install command
    arms = doc["arms"]
    keep = [arm for arm in arms if arm["agent"] in installed]
    arms.clear()
    arms.extend(keep)
    ledger = (
        Path(args.ledger)
        if args.ledger
        else fresh_demo_ledger().with_name("demo-checkpoints.ledger.jsonl")
    )
    ledger.parent.mkdir(parents=True, exist_ok=True)
    names = ", ".join(installed)
    print(f"eloledger: checkpoint demo on the embedded simulator ({names} sessions against a fake "
          f"model on 127.0.0.1; no key, nothing billed): ledger {ledger}", file=sys.stderr)  # fmt: skip
    result = _run(doc, ledger, resume=False, quiet=args.quiet)
    per_task, k = _matched_budget(ledger, doc)
    print(f"eloledger: an agent session spent {per_task} tokens per task (mean); a {k}-shot chat "
          f"arm gets that budget (same_budget){' (k capped)' if k == MAX_K else ''}",
          file=sys.stderr)  # fmt: skip
    doc.add("budget", tomlkit.table())
    doc["budget"]["per_task_tokens"] = per_task
    chat = tomlkit.table()
    chat.update({"name": f"chat-best-of-{k}", "kind": "best_of_n", "n": k, "same_budget": True,
                 "temperature": 1.0})  # fmt: skip
    doc["arms"].append(chat)
    result = _run(doc, ledger, resume=True, quiet=args.quiet)
    print(f"eloledger: {result.attempts} chat calls; budget curves of {ledger}:", file=sys.stderr)
    return _curve(ledger)


def _run(doc: Any, ledger: Path, *, resume: bool, quiet: bool) -> Any:
    import tomlkit

    from eloledger.runner.counters import RunCounters
    from eloledger.runner.progress import report_progress
    from eloledger.runner.run import run_experiment
    from eloledger.runner.spec import load_spec

    path = ledger.with_name("demo-checkpoints.spec.toml")
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")  # beside the ledger: what was run
    spec = load_spec(path, ledger=ledger)
    counters = RunCounters()

    async def main() -> Any:
        reporter = (
            None if quiet else asyncio.create_task(report_progress(counters, sys.stderr, 2.0))
        )
        try:
            return await run_experiment(spec, counters=counters, resume=resume)
        finally:
            if reporter is not None:
                reporter.cancel()

    return asyncio.run(main())


def _matched_budget(ledger: Path, doc: Any) -> tuple[int, int]:
    """An agent session's mean tokens (one session = one try at a task), and the k whose k
    chat replies spend about as much."""
    from eloledger.ledger.reader import iter_rows
    from eloledger.sim.model import count_prompt_tokens
    from eloledger.tasks import load_tasks

    rows = list(iter_rows(ledger))
    spent = [
        int(r["total_tokens"])
        for r in rows
        if r.get("role") == "sample" and r.get("agent") and r.get("status") == "ok"
    ]
    if not spent:
        raise UserError(
            f"{ledger}: no agent session finished, so there is no budget to match",
            fix="see the session rows' error and error_class fields (eloledger tokens LEDGER)",
        )
    per_task = round(statistics.fmean(spent))
    tasks = load_tasks(str(doc["tasks"]["source"]))
    call = statistics.fmean(count_prompt_tokens(t.prompt) for t in tasks) + CHAT_OUT_TOKENS
    return per_task, max(2, min(MAX_K, round(per_task / call)))


def demo_prices() -> dict[str, Any]:
    """Made-up prices per 1M tokens for the simulator's models (nothing is billed), so that
    the table's cost columns show something; prices.toml entries win over them."""
    from eloledger.ledger.prices import Price, load_prices

    return {
        "sim-large": Price(1.0, 4.0, cache_read=0.1, cache_write=1.25),  # agents cache prompts
        "sim-small": Price(0.25, 1.0, cache_read=0.025, cache_write=0.3),
        **load_prices(),
    }


def _curve(ledger: Path) -> int:
    """The ``curve`` command's own parsing and output (its defaults), on this ledger, with
    the demo's prices for the simulator's models."""
    from eloledger.cli import curve_cmd

    parser = argparse.ArgumentParser(prog="eloledger")
    curve_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["curve", str(ledger)])
    args.prices = demo_prices()
    big = args.prices["sim-large"]
    print(f"eloledger: acc/$ uses made-up demo prices (sim-large ${big.input:g} in, "
          f"${big.output:g} out per 1M tokens; prices.toml wins)", file=sys.stderr)  # fmt: skip
    return int(args.handler(args) or 0)
