"""Agent sessions in the OS sandbox, through the real runner, with a hostile stand-in CLI.

The stand-in ``claude`` speaks Claude Code's stream-json and, depending on its model, does
what a prompt-injected agent would: reads the user's secrets, writes the user's files and
its own install tree, plants symlinks out of its folder, forges the judge from the file the
tests import, and leaves a ``setsid`` sleeper holding its stdout. An honest stand-in fixes
the files and must still pass.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_standin import HEAD
from eloledger.tasks import load_tasks
from sandbox_support import need_sandbox, processes_with

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux sandbox")

CANARY = "sk-canary-agent-" + "5e" * 12
MARKER = "4244.5151"
STAND_IN = HEAD + r"""
model_call()  # through the meter: the session's only way out
def emit(event):
    print(json.dumps(event), flush=True)
def attempt(fn):
    try:
        return repr(fn())[:200]
    except Exception as exc:
        return "failed: " + type(exc).__name__
emit({"type": "system", "subtype": "init", "session_id": "sid", "model": model})
probe = {"uid": os.getuid(), "pid": os.getpid()}
if model == "hostile":
    home = plan["home"]
    probe["secret"] = attempt(lambda: open(home + "/.claude/settings.json").read())
    probe["bashrc"] = attempt(lambda: open(home + "/.bashrc", "a").write("owned"))
    probe["install"] = attempt(lambda: (here / "plan.json").write_text("owned"))
    probe["ledger"] = attempt(lambda: open(plan["ledger"], "a").write("owned\n"))
    probe["gateway"] = attempt(lambda: urllib.request.urlopen(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/models", timeout=5).status)
    os.symlink(home + "/.claude/settings.json", "leak.txt")
    os.symlink(home, "homelink")
    pathlib.Path("stats.py").write_text(
        "import __main__, os\n__main__.result.update(total=1, passed=1)\n"
        "__main__.finish()\nos._exit(0)\n")
    if os.fork() == 0:  # a sleeper that keeps our stdout open
        os.setsid()
        os.execvp("sleep", ["sleep", plan["marker"]])
if model == "fixer":
    for name, text in plan["solutions"].items():
        if os.path.exists(name):
            pathlib.Path(name).write_text(text)
pathlib.Path("probe.json").write_text(json.dumps(probe))
emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
      "result": "done", "session_id": "sid",
      "modelUsage": {model: {"inputTokens": 10, "outputTokens": 2}}})
"""


@pytest.fixture
def bwrap() -> None:
    need_sandbox()


def test_a_hostile_agent_is_contained_and_an_honest_one_passes(
    tmp_path: Path, temp_home: Path, bwrap: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (temp_home / ".claude").mkdir()
    secret = temp_home / ".claude" / "settings.json"
    secret.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": CANARY}}))
    secret.chmod(0o600)
    (temp_home / ".bashrc").write_text("# mine\n")
    bin_dir = tmp_path / "clients" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "claude"
    script.write_text(STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    ledger = tmp_path / "agents.ledger.jsonl"
    solutions: dict[str, str] = {}
    for task in load_tasks("builtin:agent-code"):
        solutions.update(task.solution_files or {})
    plan = {"home": str(temp_home), "ledger": str(ledger), "marker": MARKER,
            "solutions": solutions}  # fmt: skip
    (bin_dir / "plan.json").write_text(json.dumps(plan))
    monkeypatch.setenv("ELOLEDGER_CLIENTS_DIR", str(tmp_path / "clients"))
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    from eloledger.runner import agent_clis

    agent_clis.known_flags.cache_clear()
    spec_path = tmp_path / "spec.toml"
    arms = ""
    for name in ("hostile", "fixer"):
        arms += f'[[arms]]\nname = "{name}"\nkind = "agent"\nagent = "claude-code"\n'
        arms += f'model = "{name}"\ntimeout_s = 120\n'
    spec_path.write_text(
        '[experiment]\nname = "agents"\nprofile = "sim"\nledger = "agents.ledger.jsonl"\n'
        f'[tasks]\nsource = "builtin:agent-code"\nlimit = 1\n\n{arms}'
    )
    before = {p: p.read_bytes() for p in (secret, temp_home / ".bashrc", bin_dir / "plan.json")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(spec_path), "--headless", "--quiet",
         "--bootstrap", "0"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "Event loop is closed" not in done.stderr and "Traceback" not in done.stderr
    rows = {r["arm"]: r for r in map(json.loads, ledger.read_text().splitlines())
            if r["role"] == "sample"}  # fmt: skip
    hostile, fixer = rows["hostile"], rows["fixer"]
    # the session ended when the CLI exited, not at timeout_s, though a sleeper held stdout
    assert hostile["status"] == "ok" and elapsed < 60, (hostile, elapsed)
    assert hostile["score"] == 0 and hostile["passed"] is False
    assert fixer["passed"] is True and fixer["score"] == 1.0
    assert hostile["sandbox"] == fixer["sandbox"] == "bwrap"
    comparisons = (tmp_path / "agents.comparisons.csv").read_text().splitlines()[1:]
    assert [c.split(",")[1:4] for c in comparisons] == [["hostile", "fixer", "0"]]  # the fixer wins
    while processes_with(MARKER) and time.monotonic() - started < 90:
        time.sleep(0.1)
    assert processes_with(MARKER) == []
    probe = json.loads(Path(hostile["evidence"], "work", "probe.json").read_text())
    assert probe["uid"] not in (0, os.getuid()) and probe["pid"] < 10
    for key in ("secret", "bashrc", "install", "ledger"):
        assert probe[key].startswith("failed"), (key, probe[key])
    # its way out is there: an HTTP answer (the meter refuses a request without the session's
    # token), not a refused connection (URLError)
    assert probe["gateway"] in ("200", "failed: HTTPError"), probe["gateway"]
    assert {p: p.read_bytes() for p in before} == before
    evidence = Path(hostile["evidence"])
    assert not any(p.is_symlink() for p in evidence.rglob("*"))  # no link out of the folder
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert CANARY.encode() not in path.read_bytes(), path
    assert all(os.stat(p).st_uid == os.getuid() for p in evidence.rglob("*"))
