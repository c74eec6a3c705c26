"""The tests judge's cost per task: this checkout's judge vs main's, and agent sessions.

Judge (default): every built-in code task's reference solution judged ``--rounds`` times by

- baseline (named): **main's bwrap judge**, the source of ``git archive BASELINE src``
  (``--baseline main``) run from a temporary folder;
- **this checkout's bwrap judge** (every statement run, plain data only, the seccomp filter,
  read-only ``/`` and ``/dev``, eloledger's own tree masked);
- this checkout's judge with ``sandbox = "none"`` (for scale: the cost of the sandbox itself).

Each judge runs in its own worker process (its interpreter and imports paid once, as in a
run), one task at a time, interleaved, so both see the same machine load; each worker times
its own ``judge_tests`` call and says whether the solution passed.

Agents (``--agent claude-code|codex|gemini-cli``): the same real CLI session on the strict agent
gateway (tests/agent_gateway.py, inside one ``unshare -n`` namespace), ``run_agent_session``
with the CLI and judge sandboxed vs ``sandbox = "none"``, alternating, ``--sessions`` each.

    .venv/bin/python bench/bench_judge.py                  # judge: 16 tasks x 3 rounds
    .venv/bin/python bench/bench_judge.py --baseline main --rounds 5
    .venv/bin/python bench/bench_judge.py --agent claude-code --sessions 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from offline import rerun_offline  # noqa: E402

# one judge per worker: reads "INDEX KIND" lines, answers "SECONDS PASSED" lines
_WORKER = r"""
import sys, time
from eloledger.judges.code import judge_tests
from eloledger.tasks import load_tasks
tasks = [t for t in load_tasks("builtin:code") if t.tests and t.solution]
for line in sys.stdin:
    index, kind = line.split()
    task = tasks[int(index)]
    t0 = time.perf_counter()
    reply = "\n".join(["```python", task.solution, "```"])
    verdict = judge_tests(reply, task.tests, sandbox_kind=kind)
    print(time.perf_counter() - t0, int(verdict.passed), flush=True)
"""


class Worker:
    """A judge in a process of its own, importing eloledger from ``src``."""

    def __init__(self, src: Path, kind: str) -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env={"PYTHONPATH": str(src), "PATH": "/usr/local/bin:/usr/bin:/bin"},
        )  # fmt: skip

    def judge(self, index: int) -> tuple[float, bool]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{index} {self.kind}\n")
        self.proc.stdin.flush()
        seconds, passed = self.proc.stdout.readline().split()
        return float(seconds), passed == "1"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def bench_judge(rounds: int, baseline: str) -> None:
    from eloledger.tasks import load_tasks

    count = len([t for t in load_tasks("builtin:code") if t.tests and t.solution])
    with tempfile.TemporaryDirectory(prefix="eloledger-bench-") as folder:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", baseline, "src"],
                                 capture_output=True, check=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        workers = {
            f"{baseline}'s bwrap judge (baseline)": Worker(Path(folder, "src"), "bwrap"),
            "this checkout's bwrap judge": Worker(ROOT / "src", "bwrap"),
            'this checkout, sandbox = "none"': Worker(ROOT / "src", "none"),
        }
        times: dict[str, list[float]] = {name: [] for name in workers}
        passed: dict[str, int] = dict.fromkeys(workers, 0)
        for worker in workers.values():
            worker.judge(0)  # warm-up: imports, the sandbox probe, the seccomp program
        for _ in range(rounds):
            for index in range(count):
                for name, worker in workers.items():  # interleaved: the same load for each
                    seconds, ok = worker.judge(index)
                    times[name].append(seconds)
                    passed[name] += ok
        for worker in workers.values():
            worker.close()
    base = statistics.median(next(iter(times.values())))
    print(f"tests judge, {count} built-in code tasks x {rounds} rounds, wall per task (ms)")
    print(f"{'':38}{'median':>8}{'p90':>8}{'ratio':>7}{'passed':>8}")
    for name, ts in times.items():
        med, p90 = statistics.median(ts), statistics.quantiles(ts, n=10)[-1]
        print(f"{name:38}{med * 1000:8.1f}{p90 * 1000:8.1f}{med / base:6.2f}x"
              f"{passed[name]:>5}/{len(ts)}")  # fmt: skip


def _inside(args: argparse.Namespace) -> None:
    """In the namespace: serve, then alternate sandboxed and unsandboxed sessions."""
    import agent_gateway as gw  # noqa: I001 - found through the tests folder on sys.path
    from bench_agent_overhead import _fix_command
    from eloledger.runner.agent_clis import find_cli
    from eloledger.agents.events import SessionState
    from eloledger.runner.agent_session import AgentJob, run_agent_session
    from eloledger.tasks import load_tasks

    task = load_tasks("builtin:agent-code")[0]
    executable = find_cli(args.agent)
    assert executable is not None, f"{args.agent} is not installed (scripts/install_clients.sh)"
    script = (gw.Reply(shell=_fix_command(), text="Fixing."), gw.Reply(text="Fixed."))
    rows: dict[str, list[float]] = {"bwrap": [], "none": []}
    ok: dict[str, int] = {"bwrap": 0, "none": 0}
    with gw.serve(gw.AgentGatewayConfig(script=script)) as gateway, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.sessions):
            order = ("bwrap", "none") if i % 2 == 0 else ("none", "bwrap")
            for kind in order:
                job = AgentJob(
                    agent=args.agent, executable=executable, task=task, root_url=gateway.root,
                    api_key=gw.GOOD_KEY, model="gw-model",
                    max_turns=None if args.agent == "codex" else 8, effort=None, args=[],
                    timeout_s=240, evidence_dir=Path(tmp, f"{kind}{i}"), sandbox=kind,
                )  # fmt: skip
                state = SessionState(agent=args.agent)
                t0 = time.perf_counter()
                out = asyncio.run(run_agent_session(job, state))
                rows[kind].append(time.perf_counter() - t0)
                assert state.error_class is None, state.error
                ok[kind] += bool(out.verdict and out.verdict.passed)
    Path(args.result).write_text(json.dumps({"rows": rows, "ok": ok}))


def bench_agents(args: argparse.Namespace) -> int:
    data = rerun_offline(__file__, ["--agent", args.agent, "--sessions", str(args.sessions)])
    if data is None:
        return 2
    med = statistics.median
    none, boxed = data["rows"]["none"], data["rows"]["bwrap"]
    print(f"agent {args.agent}, {len(none)} sessions each, whole session wall (s), medians")
    print(f"{'':34}{'median':>8}{'min':>7}{'max':>7}{'passed':>8}")
    for name, key in (('sandbox = "none" (baseline)', "none"), ("CLI + judge in bwrap", "bwrap")):
        ts = data["rows"][key]
        print(f"{name:34}{med(ts):8.3f}{min(ts):7.2f}{max(ts):7.2f}{data['ok'][key]:>5}/{len(ts)}")
    print(f"sandbox overhead per session: {med(boxed) - med(none):+.3f} s "
          f"(ratio {med(boxed) / med(none):.2f}x)")  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default="main", help="git ref of the baseline judge")
    parser.add_argument("--agent", choices=("claude-code", "codex", "gemini-cli"))
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.result:
        _inside(args)
        return 0
    if args.agent:
        return bench_agents(args)
    bench_judge(args.rounds, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
