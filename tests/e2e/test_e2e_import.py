"""End to end: the REAL Claude Code, Codex and Gemini CLIs write session logs; `import` reads them.

Each CLI runs twice against ONE strict gateway (tests/agent_gateway.py) inside one ``unshare -n``
namespace: a tool-using session whose replies have several blocks (text + tool call) and whose
usage varies per request with cache reads and writes, then a resume of that session. One
gateway for both runs keeps its response ids unique, as a real provider's are. The gateway
records what it billed per run; the test imports the HOME the CLIs wrote and compares the
per-session totals with the bill, then imports again (nothing added).

With ELOLEDGER_REGEN_CORPUS=1 the logs and the bill are copied to tests/data/agent-logs/real/
(the fast test tests/imports/test_import_real.py checks that corpus without the CLIs). This file is
also the in-namespace driver: ``python test_e2e_import.py JOB``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from agent_gateway import (  # noqa: E402
    AgentGatewayConfig,
    Reply,
    canonical_invocation,
    missing_reason,
    serve,
)

CORPUS = HERE.parent / "data" / "agent-logs" / "real"
SCRIPT = (
    Reply(shell="echo first-tool", text="Let me look first."),
    Reply(shell="echo second-tool", text="One more check."),
    Reply(text="All done: first-tool, second-tool."),
)
PROMPT = "Run the two checks, then report."
RESUME_PROMPT = "Please run them again and report."
LOG_DIRS = {"claude-code": ".claude", "codex": ".codex", "gemini-cli": ".gemini"}
TIMEOUT = 180


def _session_of(agent: str, stdout: str) -> str:
    """The session id a CLI printed in its JSON event stream."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        for key in ("session_id", "thread_id", "sessionId"):  # claude, codex, gemini
            if isinstance(event.get(key), str):
                return event[key]
    return ""


def _steps(agent: str, home: Path, work: Path) -> list[dict[str, Any]]:
    argv, env = canonical_invocation(agent, PROMPT, home=home, workdir=work)
    if agent == "claude-code":
        again = [a if a != PROMPT else RESUME_PROMPT for a in argv] + ["--resume", "{session}"]
    elif agent == "codex":
        # `exec resume` takes no -s/-C (it runs in the driver's cwd, the same workdir)
        head = argv.index("exec") + 1
        rest = argv[head:-1]
        for flag in ("-s", "-C"):
            at = rest.index(flag)
            del rest[at : at + 2]
        again = [*argv[:head], "resume", "--last", *rest, RESUME_PROMPT]
    else:
        again = [a if a != PROMPT else RESUME_PROMPT for a in argv] + ["--resume", "latest"]
    return [{"argv": argv, "env": env}, {"argv": again, "env": env}]


def _drive(job_path: str) -> None:
    """Inside the namespace: one gateway, every step in order, the bill per step."""
    job = json.loads(Path(job_path).read_text())
    config = AgentGatewayConfig(script=tuple(Reply(**r) for r in job["script"]))
    results = []
    with serve(config) as gateway:
        session = ""

        def fill(text: str, values: dict[str, str]) -> str:
            for name, value in values.items():
                text = text.replace(name, value)
            return text

        for number, step in enumerate(job["steps"]):
            gate = job.get("between_steps")
            if gate and number:  # wait for the test to have seen the first step's spend
                Path(gate["ready"]).touch()
                deadline = time.monotonic() + 60
                while not Path(gate["go"]).exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            values = {"{root}": gateway.root, "{session}": session}
            start = len(gateway.billed)
            env = {
                "PATH": os.environ.get("PATH", ""),
                **{k: fill(v, values) for k, v in step["env"].items()},
            }
            proc = subprocess.run(
                [fill(a, values) for a in step["argv"]],
                cwd=job["cwd"],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=job["timeout"],
            )
            session = _session_of(job["agent"], proc.stdout) or session
            with gateway.lock:
                bill = [
                    {**b.canonical.as_row(), "model": b.model, "reply": b.reply, "tools": b.tools}
                    for b in gateway.billed[start:]
                ]
            results.append(
                {
                    "returncode": proc.returncode,
                    "stderr": proc.stderr[-2000:],
                    "session": session,
                    "billed": bill,
                }
            )
    Path(job["result"]).write_text(json.dumps(results))


def run_corpus(
    agent: str, tmp: Path, between_steps: dict[str, str] | None = None
) -> tuple[Path, list[dict[str, Any]]]:
    """Run the CLI twice (session + resume); returns its HOME and the per-step bill.

    ``between_steps`` ({"ready": path, "go": path}): before the second step the job touches
    ``ready`` and waits for ``go``, so a watcher can see the first step's spend as an event."""
    home, work = tmp / "home", tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    job = {
        "agent": agent,
        "steps": _steps(agent, home, work),
        "cwd": str(work),
        "script": [{"shell": r.shell, "text": r.text} for r in SCRIPT],
        "timeout": TIMEOUT,
        "result": str(tmp / "result.json"),
        "between_steps": between_steps,
    }
    (tmp / "job.json").write_text(json.dumps(job))
    shell = 'ip link set lo up && exec "$@"'
    cmd = ["unshare", "-n", "sh", "-c", shell, "_", sys.executable, __file__, str(tmp / "job.json")]
    subprocess.run(cmd, check=True, timeout=2 * TIMEOUT + 60, stdin=subprocess.DEVNULL)
    return home, json.loads((tmp / "result.json").read_text())


def is_unlogged_side_call(agent: str, bill: dict[str, Any]) -> bool:
    """Claude Code 2.1.197 sends one request offering no tools when a session starts (not a
    turn of the conversation) and writes it to no file under its config dir: no log reader can
    count it. Its tokens are in the CLI's own final report, not in the session log."""
    return agent == "claude-code" and not bill["tools"]


def billed_by_session(agent: str, steps: list[dict[str, Any]]) -> dict[str, int]:
    """What the gateway billed per session, for the calls the CLI logs."""
    out: dict[str, int] = {}
    for step in steps:
        logged = [b for b in step["billed"] if not is_unlogged_side_call(agent, b)]
        out[step["session"]] = out.get(step["session"], 0) + sum(b["total_tokens"] for b in logged)
    return out


def save_corpus(agent: str, home: Path, steps: list[dict[str, Any]]) -> None:
    dest = CORPUS / agent
    shutil.rmtree(dest, ignore_errors=True)
    src = home / LOG_DIRS[agent]
    for path in src.rglob("*.jsonl"):
        if "projects" in path.parts or "sessions" in path.parts or "chats" in path.parts:
            target = dest / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    (dest / "billed.json").write_text(json.dumps(steps, indent=1) + "\n")


@pytest.mark.e2e
@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli"])
def test_real_cli_logs_import_to_the_billed_totals(agent: str, tmp_path: Path) -> None:
    reason = missing_reason(agent)
    if reason:
        pytest.skip(reason)
    from eloledger.agents.importer import import_logs

    home, steps = run_corpus(agent, tmp_path)
    for step in steps:
        assert step["returncode"] == 0, step["stderr"]
        assert step["billed"], "the CLI made no billed call"
    assert len({s["session"] for s in steps}) >= 1 and all(s["session"] for s in steps)
    ledger = tmp_path / "ledger.jsonl"
    kind = agent  # an import kind is the agent's own name
    report = import_logs(kind, [home / LOG_DIRS[agent]], ledger, settle_s=0)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    got: dict[str, int] = {}
    for row in rows:
        got[row["session"]] = got.get(row["session"], 0) + row["total_tokens"]
    assert got == billed_by_session(agent, steps), report
    side = [b for step in steps for b in step["billed"] if is_unlogged_side_call(agent, b)]
    assert len(side) <= 1  # at most the one start-of-session request, never a turn
    assert not report.unknown, report.unknown
    again = import_logs(kind, [home / LOG_DIRS[agent]], ledger, settle_s=0)
    assert again.calls == 0
    if os.environ.get("ELOLEDGER_REGEN_CORPUS") == "1":
        save_corpus(agent, home, steps)


if __name__ == "__main__":
    _drive(sys.argv[1])
    time.sleep(0)


@pytest.mark.e2e
async def test_watch_shows_a_real_claude_session_grow(tmp_path: Path) -> None:
    """`watch --claude-code` while the real Claude Code runs: the spend grows to the bill."""
    import asyncio

    reason = missing_reason("claude-code")
    if reason:
        pytest.skip(reason)
    from eloledger.tui.log_watch import AgentLogWatch, LogWatchApp
    from eloledger.tui.testing import screen_text, until

    source = AgentLogWatch("claude-code", [tmp_path / "home" / ".claude"], interval=0.1)
    app = LogWatchApp(source)
    seen: list[int] = []
    gate = {"ready": str(tmp_path / "step1.done"), "go": str(tmp_path / "step2.go")}
    async with app.run_test(size=(120, 40)):
        run = asyncio.create_task(asyncio.to_thread(run_corpus, "claude-code", tmp_path, gate))
        while not run.done():
            if not seen or seen[-1] != source.counters.total_tokens:
                seen.append(source.counters.total_tokens)
            if Path(gate["ready"]).exists() and not Path(gate["go"]).exists():
                # the first session is over and the second not started: its spend must show
                deadline = time.monotonic() + 20
                while source.counters.total_tokens == 0 and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                seen.append(source.counters.total_tokens)
                Path(gate["go"]).touch()
            await asyncio.sleep(0.05)
        _, steps = run.result()
        want = sum(billed_by_session("claude-code", steps).values())
        await until(lambda: source.counters.total_tokens == want, 20)
        assert source.counters.total_tokens == want
        assert await until(lambda: f"total {want:,}" in screen_text(app)), screen_text(app)
    growth = [t for t in seen if 0 < t < want]
    assert growth, f"the spend should be seen between 0 and {want} while the CLI runs: {seen}"
