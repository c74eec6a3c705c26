"""Agent arms through the real runner, with a stand-in ``claude`` executable.

The stand-in is a small script that speaks Claude Code's stream-json (the shapes of the real
CLI's output in facts/agent-samples) and edits the session's files, so the runner's own
duties are tested deterministically: spec checks, isolation, the process-group timeout,
error classes, the workdir tests judge, and resume. The real CLIs are exercised in
tests/e2e/test_e2e_agents.py.
"""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from agent_standin import HEAD, canonical
from eloledger.errors import UserError
from eloledger.runner.run import run_experiment
from eloledger.tasks import load_tasks

LOG_READERS = importlib.util.find_spec("eloledger.agents.logscan") is not None
FAKE_CLAUDE = HEAD + r"""
log = pathlib.Path(os.environ["HOME"], ".claude", "projects", "-work", "sid.jsonl")
log.parent.mkdir(parents=True, exist_ok=True)
log.write_text(json.dumps({"type": "assistant", "sessionId": "sid", "requestId": "r1",
    "timestamp": "2026-12-01T00:00:00Z", "cwd": os.getcwd(), "message": {"id": "m1",
    "model": model, "usage": {"input_tokens": 90, "output_tokens": 7}}}) + "\n")
with open(here / "calls.log", "a") as log:
    log.write(json.dumps({"cwd": os.getcwd(), "env": dict(os.environ), "argv": sys.argv[1:],
                          "pid": os.getpid(), "files": sorted(os.listdir("."))}) + "\n")
answered = model_call()  # one real model call, through the run's meter
with open(here / "answers.log", "a") as log:
    log.write(json.dumps(answered) + "\n")
def emit(event):
    print(json.dumps(event), flush=True)
emit({"type": "system", "subtype": "init", "session_id": "sid-" + str(os.getpid()), "model": model})
emit({"type": "assistant", "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1",
      "name": "Edit", "input": {"file": "x"}}], "usage": {"input_tokens": 90, "output_tokens": 1}}})
if model == "hang":
    child = subprocess.Popen(["sleep", "300"])
    (here / "child.pid").write_text(str(child.pid))
    time.sleep(300)
if model == "slowfix":
    time.sleep(float(plan.get("delay", 2)))
if model in ("fixer", "slowfix"):
    for name, text in plan["solutions"].items():
        if os.path.exists(name):
            pathlib.Path(name).write_text(text)
usage = {"inputTokens": 100, "outputTokens": 20, "cacheReadInputTokens": 1000,
         "cacheCreationInputTokens": 50}
result = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
          "result": "done", "session_id": "sid", "modelUsage": {model: usage}}
if model == "auth":
    result.update(is_error=True, result="Invalid API key", num_turns=1,
                  modelUsage={model: {"inputTokens": 0, "outputTokens": 0}})
if model == "maxturns":
    result.update(is_error=True, subtype="error_max_turns")
emit(result)
sys.exit(1 if result["is_error"] else 0)
"""


@pytest.fixture
def clients(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clients dir holding the stand-in ``claude`` (and no codex or gemini)."""
    bin_dir = tmp_path / "clients" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "claude"
    script.write_text(FAKE_CLAUDE)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    solutions: dict[str, str] = {}
    for task in load_tasks("builtin:agent-code"):
        solutions.update(task.solution_files or {})
    (bin_dir / "plan.json").write_text(json.dumps({"solutions": solutions}))
    monkeypatch.setenv("ELOLEDGER_CLIENTS_DIR", str(tmp_path / "clients"))
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    from eloledger.runner import agent_clis

    agent_clis.known_flags.cache_clear()
    return bin_dir


def _spec(tmp_path: Path, arms: str, *, limit: int = 2, extra: str = "") -> Path:
    """The stand-in logs to its own folder and by host pid, which the OS sandbox rightly
    hides (read-only install tree, own PID namespace): these tests of the runner's duties
    run unsandboxed; the sandboxed sessions are tests/sandbox/test_sandbox_agents.py's."""
    arms += '\n[judge]\nsandbox = "none"\n'
    path = tmp_path / "spec.toml"
    path.write_text(
        f"""[experiment]
name = "agents"
profile = "sim"
ledger = "agents.ledger.jsonl"
concurrency = 2
{extra}
[tasks]
source = "builtin:agent-code"
limit = {limit}

{arms}"""
    )
    return path


def _all_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _rows(path: Path) -> list[dict]:
    """The session rows (without the meter's per-call rows)."""
    return [r for r in _all_rows(path) if r.get("role") != "call"]


def _answered(clients: Path) -> list[tuple[int, int]]:
    """(prompt, completion) of each model answer the stand-ins received, in the order logged."""
    lines = (clients / "answers.log").read_text().splitlines()
    return [canonical(json.loads(x)) for x in lines]


def _load(path: Path):
    from eloledger.runner.spec import load_spec

    return load_spec(path)


FIX_VS_LAZY = """[[arms]]
name = "fixer"
kind = "agent"
agent = "claude-code"
model = "fixer"
max_turns = 8

[[arms]]
name = "lazy"
kind = "agent"
agent = "claude-code"
model = "lazy"
"""


def test_agent_arms_run_judge_the_edited_files_and_record_the_final_report(
    tmp_path: Path, clients: Path
) -> None:
    spec = _load(_spec(tmp_path, FIX_VS_LAZY))
    result = asyncio.run(run_experiment(spec))
    rows = _rows(spec.ledger)
    assert len(rows) == 4  # 2 tasks x 2 arms x 1 session: one row per session
    calls = [r for r in _all_rows(spec.ledger) if r.get("role") == "call"]
    assert len(calls) == 4  # one model call per session, metered
    answered = sorted(_answered(clients))
    assert sorted((c["prompt_tokens"], c["completion_tokens"]) for c in calls) == answered
    for row in rows:
        # the meter's count of the one call, not the report (1150 in, 20 out) nor the log
        (call,) = [c for c in calls if (c["task_id"], c["arm"]) == (row["task_id"], row["arm"])]
        assert (row["prompt_tokens"], row["completion_tokens"]) == (
            call["prompt_tokens"], call["completion_tokens"])  # fmt: skip
        assert row["usage_source"] == "server" and row["agent"] == "claude-code"
        assert call["model"] == "sim-small" and call["model_answered"] == "sim-small"
        assert row["calls"] == 1 and call["status"] == "ok" and call["latency_ms"] > 0
        assert (row["turns"], row["tool_calls"], row["status"]) == (2, 1, "ok")
        # the stand-in's report (1150 in, 20 out) deliberately differs from what it spent
        assert row["usage_check"] == "disagree" and "reported 1170" in row["usage_check_detail"]
        assert Path(row["evidence"], "stream.jsonl").is_file()
    passed = {r["arm"]: r["passed"] for r in rows}
    assert passed == {"fixer": True, "lazy": False}
    assert result.comparisons == 2 and result.arm_tokens == sum(a + b for a, b in answered)
    with spec.comparisons_path().open(newline="") as fh:
        comparisons = list(csv.DictReader(fh))
    assert comparisons and all(float(c["outcome"]) == 1.0 for c in comparisons)
    calls = [json.loads(x) for x in (clients / "calls.log").read_text().splitlines()]
    assert "--max-turns" in calls[0]["argv"] or "--max-turns" in calls[1]["argv"]


def test_each_session_is_isolated_and_gets_the_key_only_in_its_environment(
    tmp_path: Path, clients: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret-should-not-leak")
    spec = _load(_spec(tmp_path, FIX_VS_LAZY, limit=1, extra='[sim]\napi_key = "sk-sim-key-777"'))
    asyncio.run(run_experiment(spec))
    calls = [json.loads(x) for x in (clients / "calls.log").read_text().splitlines()]
    assert len(calls) == 2
    homes = {c["env"]["HOME"] for c in calls}
    cwds = {c["cwd"] for c in calls}
    assert len(homes) == 2 and len(cwds) == 2  # a fresh HOME and workdir per session
    assert all(c > 0 for _, c in _answered(clients))  # the simulator took the meter's real key
    tokens = {c["env"]["ANTHROPIC_API_KEY"] for c in calls}
    assert len(tokens) == 2  # a token of its own per session: the key is the meter's
    for c in calls:
        assert c["env"]["HOME"] != os.environ["HOME"]
        assert "OPENAI_API_KEY" not in c["env"]  # nothing of the parent's environment
        assert "sk-sim-key-777" not in json.dumps(c)  # not in its environment nor its argv
        assert c["env"]["ANTHROPIC_API_KEY"].startswith("eloledger-session-")
        assert c["files"] == ["stats.py", "test_stats.py"]
        assert not Path(c["cwd"]).exists()  # the temp folder is removed afterwards
    ledger_text = spec.ledger.read_text()
    assert "sk-sim-key-777" not in ledger_text


def test_timeout_kills_the_whole_process_group_and_writes_a_timeout_row(
    tmp_path: Path, clients: Path
) -> None:
    arms = '[[arms]]\nname = "hang"\nkind = "agent"\nagent = "claude-code"\nmodel = "hang"\n'
    arms += "timeout_s = 2\n"
    spec = _load(_spec(tmp_path, arms, limit=1))
    started = time.monotonic()
    asyncio.run(run_experiment(spec))
    assert time.monotonic() - started < 30
    (row,) = _rows(spec.ledger)
    assert (row["status"], row["error_class"]) == ("error", "timeout")
    # no final report: the meter's count of the call it made before it hung
    assert row["usage_source"] == "server"
    assert (row["prompt_tokens"], row["completion_tokens"]) == _answered(clients)[0]
    child = int((clients / "child.pid").read_text())
    time.sleep(0.2)
    assert not _alive(child), "the CLI's child survived the timeout"


@pytest.mark.parametrize(("model", "error_class"), [("auth", "auth"), ("maxturns", "max_turns")])
def test_cli_failures_are_error_rows_with_their_class(
    tmp_path: Path, clients: Path, model: str, error_class: str
) -> None:
    arms = f'[[arms]]\nname = "a"\nkind = "agent"\nagent = "claude-code"\nmodel = "{model}"\n'
    spec = _load(_spec(tmp_path, arms, limit=1))
    asyncio.run(run_experiment(spec))
    (row,) = _rows(spec.ledger)
    assert (row["status"], row["error_class"]) == ("error", error_class)


def test_best_of_n_over_sessions_picks_a_passing_session(tmp_path: Path, clients: Path) -> None:
    arms = FIX_VS_LAZY.replace('model = "fixer"', 'model = "fixer"\nn = 3')
    spec = _load(_spec(tmp_path, arms, limit=1))
    asyncio.run(run_experiment(spec))
    rows = _rows(spec.ledger)
    assert sorted(r["sample"] for r in rows if r["arm"] == "fixer") == [0, 1, 2]
    results = spec.results_path().read_text()
    assert "fixer" in results and len(rows) == 4


@pytest.mark.parametrize(
    ("arm", "message"),
    [
        ('agent = "cursor"', "unknown agent 'cursor'"),
        ('agent = "claude-code"\nargs = ["--no-such-flag"]', "no flag '--no-such-flag'"),
        ('agent = "codex"\nmax_turns = 3', "codex exec has no turn limit"),
        ('agent = "gemini-cli"\neffort = "high"', "gemini-cli has no effort"),
        ('agent = "claude-code"\ntemperature = 0.3', "temperature does not apply"),
    ],
)
def test_bad_agent_arms_are_spec_line_errors(
    tmp_path: Path, clients: Path, arm: str, message: str
) -> None:
    path = _spec(tmp_path, f'[[arms]]\nname = "a"\nkind = "agent"\n{arm}\n')
    with pytest.raises(UserError) as info:
        asyncio.run(run_experiment(_load(path)))
    text = info.value.one_line()
    assert message in text
    line = int(text.split(":")[1])
    assert line > 10  # the arm's line, not the top of the file
    assert path.read_text().splitlines()[line - 1].split("=")[0].strip() in arm


def test_missing_cli_names_the_install_script(tmp_path: Path, clients: Path) -> None:
    path = _spec(tmp_path, '[[arms]]\nname = "a"\nkind = "agent"\nagent = "codex"\n')
    with pytest.raises(UserError) as info:
        asyncio.run(run_experiment(_load(path)))
    text = info.value.one_line()
    assert "spec.toml:" in text and "scripts/install_clients.sh" in text


def test_killed_run_resumes_without_rerunning_finished_sessions(
    tmp_path: Path, clients: Path
) -> None:
    plan = json.loads((clients / "plan.json").read_text())
    (clients / "plan.json").write_text(json.dumps({**plan, "delay": 3}))
    (clients / "calls.log").unlink(missing_ok=True)
    (clients / "answers.log").unlink(missing_ok=True)
    arms = FIX_VS_LAZY.replace('model = "fixer"', 'model = "slowfix"')
    path = _spec(tmp_path, arms, limit=2, extra="")
    ledger = tmp_path / "agents.ledger.jsonl"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "eloledger", "run", str(path), "--headless", "--quiet"]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # lazy sessions end at once, slowfix ones after 3 s
        if ledger.exists() and _rows(ledger) and _calls_settled(clients):
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    pids = [json.loads(x)["pid"] for x in (clients / "calls.log").read_text().splitlines()]
    time.sleep(1.0)
    assert not [p for p in pids if _alive(p)], "a CLI outlived the killed eloledger"
    before = _rows(ledger)
    started = _invocations(clients)
    assert before and sum(started.values()) > len(before)  # killed with a session in flight
    finished = {_unit(r["task_id"], r["arm"]) for r in before}
    subprocess.run([*cmd, "--resume"], env=env, cwd=tmp_path, check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    after = _rows(ledger)
    final = [r for r in after if not r.get("will_retry")]
    keys = [(r["task_id"], r["arm"], r["session"], r["sample"]) for r in final]
    assert len(keys) == len(set(keys)) == 4  # every session once: none counted twice
    assert after[: len(before)] == before  # the ledger was only appended to
    runs = _invocations(clients)
    for unit in finished:
        assert runs[unit] == 1, f"finished session {unit} was run again"
    rerun = {u for u in runs if u not in finished and runs[u] == 2}
    assert rerun  # the killed ones ran again...
    interrupted = [r for r in after if r.get("error_class") == "interrupted"]
    cut = {_unit(r["task_id"], r["arm"]) for r in interrupted}
    assert rerun <= cut and not cut & finished  # ...each after an "interrupted" row (a session
    # killed before its CLI started has one too: its folder was made, its CLI never ran)
    for r in interrupted:  # that counts what the killed CLI's session log shows it spent
        assert r["will_retry"] is True and r["attempt"] == 1
        logged = _unit(r["task_id"], r["arm"]) in rerun  # its CLI had started
        # the meter's record on disk (its call ends before the 3 s wait)
        assert r["usage_source"] == ("server" if logged else "missing")
        assert (r.get("prompt_tokens", 0) > 0) is bool(logged)
    assert all(r["attempt"] == 2 for r in final if _unit(r["task_id"], r["arm"]) in cut)
    assert all(r["passed"] for r in final if r["arm"] == "fixer")


_FIRST_FILE = {t.task_id: sorted(t.files or {})[0] for t in load_tasks("builtin:agent-code")}


def _calls_settled(clients: Path) -> bool:
    """Every CLI started so far has had its model call answered, and no CLI started in the
    last 0.2 s: the sessions in flight are sleeping after their call, so the meter's record
    of each is on disk (a kill during a call would leave only the session log)."""

    def lines(name: str) -> int:
        path = clients / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    started = lines("calls.log")
    if lines("answers.log") != started:
        return False
    time.sleep(0.2)
    return lines("calls.log") == lines("answers.log") == started


def _unit(task_id: str, arm: str) -> tuple[str, str]:
    return (_FIRST_FILE[task_id], "slowfix" if arm == "fixer" else arm)


def _invocations(clients: Path) -> Counter:
    """CLI starts per (task's first file, model) from the stand-in's own log."""
    calls = [json.loads(x) for x in (clients / "calls.log").read_text().splitlines()]
    return Counter((c["files"][0], c["argv"][c["argv"].index("--model") + 1]) for c in calls)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_hard_budget_stops_a_running_session_and_keeps_its_tokens(
    tmp_path: Path, clients: Path
) -> None:
    arms = '[[arms]]\nname = "hang"\nkind = "agent"\nagent = "claude-code"\nmodel = "hang"\n'
    spec = _load(_spec(tmp_path, arms, limit=2, extra="[budget]\nmax_total_tokens = 50\n"))
    started = time.monotonic()
    result = asyncio.run(run_experiment(spec))
    assert time.monotonic() - started < 30  # not the 300 s the stand-in would hang
    rows = _rows(spec.ledger)
    assert result.stopped == "budget" and len(rows) == 2  # concurrency 2: both were running
    for row in rows:
        assert row["error_class"] == "budget"
        assert row["usage_source"] == "server"
        assert row["total_tokens"] in {sum(a) for a in _answered(clients)}  # its call counted
    pids = [json.loads(x)["pid"] for x in (clients / "calls.log").read_text().splitlines()]
    assert not [p for p in pids if _alive(p)]


def test_out_of_turns_sessions_lose_on_their_files_but_auth_failures_are_not_compared(
    tmp_path: Path, clients: Path
) -> None:
    arms = FIX_VS_LAZY.replace('model = "lazy"', 'model = "maxturns"')
    arms += '\n[[arms]]\nname = "badkey"\nkind = "agent"\nagent = "claude-code"\nmodel = "auth"\n'
    spec = _load(_spec(tmp_path, arms, limit=2))
    result = asyncio.run(run_experiment(spec))
    rows = spec.comparisons_path().read_text().splitlines()[1:]
    pairs = {tuple(line.split(",")[1:3]) for line in rows}
    assert pairs == {("fixer", "lazy")}  # the out-of-turns arm (named lazy) is compared
    assert all(float(line.split(",")[3]) == 1.0 for line in rows)  # and loses on its files
    assert result.comparisons == 2


def test_cancel_kills_running_sessions_and_writes_no_row(tmp_path: Path, clients: Path) -> None:
    arms = '[[arms]]\nname = "hang"\nkind = "agent"\nagent = "claude-code"\nmodel = "hang"\n'
    spec = _load(_spec(tmp_path, arms, limit=2))

    async def main():  # noqa: ANN202
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(3.0, cancel.set)
        return await run_experiment(spec, cancel=cancel)

    started = time.monotonic()
    result = asyncio.run(main())
    assert result.stopped == "cancelled" and time.monotonic() - started < 30
    assert not spec.ledger.exists() or not _rows(spec.ledger)  # redone on --resume
    time.sleep(0.3)
    pids = [json.loads(x)["pid"] for x in (clients / "calls.log").read_text().splitlines()]
    assert len(pids) == 2 and not [p for p in pids if _alive(p)]
    assert not _alive(int((clients / "child.pid").read_text()))  # the CLI's own child too


def test_arms_table_leaves_max_tokens_and_length_out_for_agent_arms(
    tmp_path: Path, clients: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CLI session has no max_tokens and no finish_reason: '-' in the table, null in JSON."""
    import argparse

    from eloledger.cli import run_cmd

    spec = _load(_spec(tmp_path, FIX_VS_LAZY, limit=1))
    result = asyncio.run(run_experiment(spec))
    assert {a["arm"] for a in result.arms} == {"fixer", "lazy"}
    for arm in result.arms:
        assert arm["kind"] == "agent" and arm["ok"] == 1
        assert arm["max_tokens"] is None and arm["length_rate"] is None

    run_cmd.report(result, argparse.Namespace(format="table", bootstrap=0, wide=True))
    table = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(table) if line.startswith("arm ") and "length%" in line)
    cut = table[at].index("max_tokens")
    for name in ("fixer", "lazy"):
        row = next(line for line in table[at:] if line.startswith(name + " "))
        assert "512" not in row and "0.0" not in row, row
        assert row[cut : cut + len("max_tokens")].strip() == "-", row
        assert row.rstrip().endswith("-"), row

    run_cmd.report(result, argparse.Namespace(format="json", bootstrap=0, wide=True))
    arms = json.loads(capsys.readouterr().out)["arms"]
    assert [(a["max_tokens"], a["length_rate"]) for a in arms] == [(None, None), (None, None)]
