"""Checkpoint overhead per agent session: the same real-CLI session with and without snapshots.

Baseline (named): ``run_agent_session`` without checkpoints. Candidate: the same session with
``checkpoints = "tokens"`` (1.5x grid; the folder snapshotted by hard links and copies in a
worker thread, each snapshot judged by the task's scorer in the sandbox after the session).
Both play the same simulated session (same ``x-sim-sample`` key: the same plan, turns and
tokens) of the scored task builtin:agent-opt ``opt-knapsack`` on the embedded simulator,
inside one ``unshare -n`` namespace, alternating which goes first, ``--sessions`` pairs.
Reported per session (medians): the CLI's own wall time (start to exit, what checkpoints must
not slow down), the event loop's worst lag while the CLI ran (the stream reader's delay; a
10 ms ticker), eloledger's own CPU, snapshots and their copy time, and the whole session with
the judging of its checkpoints; ratios candidate / baseline.

    .venv/bin/python bench/bench_checkpoints.py                       # claude-code, 4 pairs
    .venv/bin/python bench/bench_checkpoints.py --agent codex --sessions 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from offline import rerun_offline  # noqa: E402


async def _one(job, key: str, checkpoints: str | None) -> dict:  # noqa: ANN001
    from dataclasses import replace

    from eloledger.agents.events import SessionState
    from eloledger.runner.agent_session import run_agent_session

    job = replace(job, checkpoints=checkpoints, headers={"x-sim-sample": key},
                  evidence_dir=job.evidence_dir / f"{key}-{checkpoints}")  # fmt: skip
    state = SessionState(agent=job.agent)
    lag = 0.0
    running = True

    async def ticker() -> None:
        nonlocal lag
        while running:
            t0 = time.perf_counter()
            await asyncio.sleep(0.01)
            lag = max(lag, time.perf_counter() - t0 - 0.01)

    tick = asyncio.ensure_future(ticker())
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    out = await run_agent_session(job, state)
    whole = time.perf_counter() - t0
    running = False
    await tick
    assert state.error_class is None and state.final is not None, state.error
    marks = [m for m, _ in out.checkpoints]
    return {
        "cli_wall": (state.ended or 0) - state.started,
        "whole": whole,
        "own_cpu": time.process_time() - cpu0,
        "lag": lag,
        "tokens": state.final.total_tokens,
        "snapshots": len(marks),
        "copy_s": sum(m.copy_s for m in marks),
        "linked": sum(m.linked for m in marks),
        "copied": sum(m.copied for m in marks),
        "score": out.verdict.score if out.verdict else None,
    }


async def _inside_async(args: argparse.Namespace) -> list[dict]:
    from eloledger.runner.agent_clis import find_cli
    from eloledger.runner.agent_session import AgentJob
    from eloledger.sim import SimServer
    from eloledger.tasks import load_tasks

    task = next(t for t in load_tasks("builtin:agent-opt") if t.task_id == "opt-knapsack")
    executable = find_cli(args.agent)
    assert executable is not None, f"{args.agent} is not installed (scripts/install_clients.sh)"
    server = SimServer(port=0, seed=0, speed=50.0)
    await server.start()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            job = AgentJob(
                agent=args.agent, executable=executable, task=task, root_url=server.base_url,
                api_key="sim", model="sim-large",
                max_turns=None if args.agent == "codex" else 20, effort=None, args=[],
                timeout_s=240, evidence_dir=Path(tmp),
            )  # fmt: skip
            for i in range(args.sessions):
                order = (None, "tokens") if i % 2 == 0 else ("tokens", None)
                pair = {c: await _one(job, f"bench|{i}|0", c) for c in order}
                rows.append({"plain": pair[None], "checkpoints": pair["tokens"]})
    finally:
        await server.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="claude-code", choices=("claude-code", "codex"))
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.result:
        Path(args.result).write_text(json.dumps(asyncio.run(_inside_async(args))))
        return 0
    rows = rerun_offline(__file__, ["--agent", args.agent, "--sessions", str(args.sessions)])
    if rows is None:
        return 2
    med = statistics.median
    print(f"agent {args.agent}, {len(rows)} sessions each way, same simulated session; medians")
    print(f"{'':28}{'no checkpoints':>16}{'checkpoints':>13}{'ratio':>8}")
    for label, key, scale, unit in (
        ("CLI wall (start to exit)", "cli_wall", 1, "s"),
        ("event loop worst lag", "lag", 1000, "ms"),
        ("eloledger own CPU", "own_cpu", 1000, "ms"),
        ("whole session + judging", "whole", 1, "s"),
    ):
        a = med(r["plain"][key] for r in rows) * scale
        b = med(r["checkpoints"][key] for r in rows) * scale
        ratio = f"{b / a:7.2f}x" if a else "       -"
        print(f"{label:28}{a:13.3f} {unit:2}{b:10.3f} {unit:2}{ratio}")
    c = [r["checkpoints"] for r in rows]
    snaps = med(x["snapshots"] for x in c)
    per = med(x["copy_s"] / max(1, x["snapshots"]) for x in c) * 1000
    print(f"snapshots per session: {snaps:g}, copy time per snapshot {per:.2f} ms (worker "
          f"thread), files hard-linked / copied per session: {med(x['linked'] for x in c):g} / "
          f"{med(x['copied'] for x in c):g}")  # fmt: skip
    print("per pair, CLI wall s (no checkpoints / checkpoints), tokens, final score:")
    for r in rows:
        a, b = r["plain"], r["checkpoints"]
        print(f"  {a['cli_wall']:6.3f} / {b['cli_wall']:6.3f}   {a['tokens']} / {b['tokens']}"
              f"   {a['score']} / {b['score']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
