"""The tests judge's cost per task, before and after issue 17, and agent sessions in the sandbox.

Judge (default): every built-in code task's reference solution judged ``--rounds`` times by

- baseline (named: the judge before issue 17): one ``python -I`` child that runs the candidate
  *and* counts the asserts (forgeable: the candidate's process writes the verdict), kept here
  verbatim so the comparison stays reproducible;
- the proxy judge with ``sandbox = "none"`` (two plain processes, plain-data proxy);
- the proxy judge in bubblewrap (two sandboxes: the shipped default).

Agents (``--agent claude-code|codex|gemini-cli``): the same real CLI session on the strict agent
gateway (tests/agent_gateway.py, inside one ``unshare -n`` namespace), ``run_agent_session``
with the CLI and judge sandboxed vs ``sandbox = "none"``, alternating, ``--sessions`` each.

    .venv/bin/python bench/bench_judge.py                  # judge: 16 tasks x 3 rounds
    .venv/bin/python bench/bench_judge.py --agent claude-code --sessions 5
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
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

# The harness of judges/code.py before issue 17 (the baseline; do not use it to judge).
_OLD_HARNESS = r"""
import ast, json, resource, sys
cpu, mem = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
result = {"total": 0, "passed": 0, "error": None}
out = open("result.json", "w")
tests = ast.parse(open("tests.py").read())
result["total"] = sum(isinstance(node, ast.Assert) for node in tests.body) or 1
ns = {"__name__": "candidate"}
exec(compile(open("candidate.py").read(), "candidate.py", "exec"), ns)
for node in tests.body:
    code = compile(ast.Module(body=[node], type_ignores=[]), "tests.py", "exec")
    try:
        exec(code, ns)
        if isinstance(node, ast.Assert):
            result["passed"] += 1
    except BaseException as exc:
        if not isinstance(node, ast.Assert):
            break
out.write(json.dumps(result)); out.close()
"""


def old_judge(code: str, tests: str, timeout_s: float = 5.0) -> bool:
    """The pre-issue-17 judge: one unsandboxed child; its own result.json is the verdict."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "candidate.py").write_text(code)
        (work / "tests.py").write_text(tests)
        (work / "harness.py").write_text(_OLD_HARNESS)
        proc = subprocess.Popen(
            [sys.executable, "-I", "harness.py", "6", str(512 << 20)], cwd=work,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, start_new_session=True,
        )  # fmt: skip
        try:
            proc.wait(timeout=timeout_s)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        result = json.loads((work / "result.json").read_text())
        return result["passed"] == result["total"]


def bench_judge(rounds: int) -> None:
    from eloledger.judges.code import judge_tests
    from eloledger.tasks import load_tasks

    tasks = [t for t in load_tasks("builtin:code") if t.tests and t.solution]
    ways = {
        "baseline: one child, forgeable": lambda c, t: old_judge(c, t),
        'proxy judge, sandbox = "none"': lambda c, t: judge_tests(
            f"```python\n{c}\n```", t, sandbox_kind="none").passed,
        "proxy judge in bwrap (default)": lambda c, t: judge_tests(
            f"```python\n{c}\n```", t, sandbox_kind="bwrap").passed,
    }  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in ways}
    passed: dict[str, int] = dict.fromkeys(ways, 0)
    for _ in range(rounds):
        for task in tasks:
            for name, judge in ways.items():  # interleaved: the same load for each
                t0 = time.perf_counter()
                passed[name] += bool(judge(task.solution, task.tests))
                times[name].append(time.perf_counter() - t0)
    base = statistics.median(times[next(iter(ways))])
    print(f"tests judge, {len(tasks)} built-in code tasks x {rounds} rounds, wall per task (ms)")
    print(f"{'':34}{'median':>8}{'p90':>8}{'ratio':>7}{'passed':>8}")
    for name, ts in times.items():
        med, p90 = statistics.median(ts), statistics.quantiles(ts, n=10)[-1]
        print(f"{name:34}{med * 1000:8.1f}{p90 * 1000:8.1f}{med / base:6.2f}x"
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
    parser.add_argument("--agent", choices=("claude-code", "codex", "gemini-cli"))
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.result:
        _inside(args)
        return 0
    if args.agent:
        return bench_agents(args)
    bench_judge(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
