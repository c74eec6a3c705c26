"""eloledger's own cost per agent session, around the real CLI, vs launching the CLI bare.

Baseline (named): what a shell loop does, ``subprocess`` with the same argv and environment in
a prepared folder, reading stdout to the end. Candidate: ``run_agent_session`` (fresh work
folder + HOME, clean environment, live stream parsing, evidence copy, the tests judge in the
work folder). Both run the same real CLI against the strict agent gateway
(tests/agent_gateway.py), inside one ``unshare -n`` namespace, alternating, ``--sessions`` each.
Reported per session: wall time of each, the difference, and this process's own CPU time
(the CLI's and the judge's CPU are children, reported apart for scale).

    .venv/bin/python bench/bench_agent_overhead.py                     # claude-code, 5 + 5
    .venv/bin/python bench/bench_agent_overhead.py --agent codex --sessions 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from offline import rerun_offline  # noqa: E402


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


async def _bare(argv: list[str], env: dict[str, str], cwd: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=1 << 24,
    )  # fmt: skip
    assert proc.stdout is not None
    async for _ in proc.stdout:
        pass
    await proc.wait()


def _timed_bare(argv: list[str], env: dict[str, str], work: Path) -> tuple[float, float, float]:
    """(wall, own CPU, children's CPU) of one bare run."""
    cpu0, kids0, t0 = time.process_time(), _children_cpu(), time.perf_counter()
    asyncio.run(_bare(argv, env, work))
    return time.perf_counter() - t0, time.process_time() - cpu0, _children_cpu() - kids0


def _fix_command() -> str:
    """The e2e test's scripted fix (a shell command writing the solution files)."""
    import importlib.util

    path = ROOT / "tests" / "e2e" / "test_e2e_agents.py"
    spec = importlib.util.spec_from_file_location("e2e_agents", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fix_command()


def _inside(args: argparse.Namespace) -> None:
    """In the namespace: serve, then alternate bare and eloledger sessions."""
    import agent_gateway as gw  # noqa: I001 - found through the tests folder on sys.path
    from eloledger.runner.agent_clis import HEADLESS, find_cli
    from eloledger.agents.events import LaunchRequest, SessionState
    from eloledger.runner.agent_session import AgentJob, run_agent_session
    from eloledger.tasks import load_tasks

    task = load_tasks("builtin:agent-code")[0]
    executable = find_cli(args.agent)
    assert executable is not None, f"{args.agent} is not installed (scripts/install_clients.sh)"
    rows = []
    script = (gw.Reply(shell=_fix_command(), text="Fixing."), gw.Reply(text="Fixed."))
    config = gw.AgentGatewayConfig(script=script)
    with gw.serve(config) as gateway, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.sessions):
            # baseline: the same launch line, prepared by hand, read to EOF
            work, home = Path(tmp, f"w{i}"), Path(tmp, f"h{i}")
            work.mkdir()
            (home / ".codex").mkdir(parents=True)
            for rel, text in (task.files or {}).items():
                (work / rel).write_text(text)
            launch = HEADLESS[args.agent].launch(
                LaunchRequest(
                    prompt=task.prompt, root_url=gateway.root, api_key=gw.GOOD_KEY,
                    workdir=str(work), model="gw-model",
                    max_turns=None if args.agent == "codex" else 8,
                )
            )  # fmt: skip
            for rel, text in launch.home_files.items():
                (home / rel).parent.mkdir(parents=True, exist_ok=True)
                (home / rel).write_text(text)
            env = {"PATH": f"{executable.parent}:{os.environ['PATH']}", "HOME": str(home),
                   "CODEX_HOME": str(home / ".codex"), **launch.env}  # fmt: skip

            argv = [str(executable), *launch.argv[1:]]
            if i % 2 == 0:  # alternate which goes first (caches, load)
                bare = _timed_bare(argv, env, work)
            job = AgentJob(
                agent=args.agent, executable=executable, task=task, root_url=gateway.root,
                api_key=gw.GOOD_KEY, model="gw-model",
                max_turns=None if args.agent == "codex" else 8, effort=None, args=[],
                timeout_s=240, evidence_dir=Path(tmp, f"ev{i}"),
            )  # fmt: skip
            state = SessionState(agent=args.agent)
            cpu0, kids0, t0 = time.process_time(), _children_cpu(), time.perf_counter()
            out = asyncio.run(run_agent_session(job, state))
            ours = (time.perf_counter() - t0, time.process_time() - cpu0, _children_cpu() - kids0)
            if i % 2 == 1:
                bare = _timed_bare(argv, env, work)
            assert state.error_class is None and state.final is not None, state.error
            rows.append({"bare": bare, "eloledger": ours, "own_cpu_s": out.own_cpu_s,
                         "passed": bool(out.verdict and out.verdict.passed)})  # fmt: skip
        from eloledger.judges.workdir import judge_workdir

        judge = []  # the tests judge alone (a Python child), to attribute the wall difference
        for i in range(args.sessions):
            t0 = time.perf_counter()
            judge_workdir(Path(tmp, f"w{i}"), task.tests or "")
            judge.append(time.perf_counter() - t0)
    Path(args.result).write_text(json.dumps({"rows": rows, "judge": judge}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="claude-code", choices=("claude-code", "codex"))
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.result:
        _inside(args)
        return 0
    data = rerun_offline(__file__, ["--agent", args.agent, "--sessions", str(args.sessions)])
    if data is None:
        return 2
    rows = data["rows"]
    med = statistics.median
    bare_wall = med(r["bare"][0] for r in rows)
    ours_wall = med(r["eloledger"][0] for r in rows)
    print(f"agent {args.agent}, {len(rows)} sessions each, medians (seconds)")
    print(f"{'':26}{'wall':>8}{'min':>7}{'max':>7}{'own CPU':>9}{'child CPU':>11}")
    for name, key in (("bare subprocess (baseline)", "bare"), ("eloledger session", "eloledger")):
        walls = [r[key][0] for r in rows]
        own = med(r[key][1] for r in rows)
        kids = med(r[key][2] for r in rows)
        print(f"{name:26}{med(walls):8.3f}{min(walls):7.2f}{max(walls):7.2f}{own:9.3f}{kids:11.3f}")
    print(f"of which the tests judge alone (median): {med(data['judge']):.3f} s")
    print(f"wall overhead per session: {ours_wall - bare_wall:+.3f} s "
          f"(ratio {ours_wall / bare_wall:.2f}x)")  # fmt: skip
    own = med(r["own_cpu_s"] for r in rows)
    print(f"eloledger's own CPU per session (run_agent_session): {own * 1000:.1f} ms")
    print(f"tests judged the edited files: {sum(r['passed'] for r in rows)}/{len(rows)} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
