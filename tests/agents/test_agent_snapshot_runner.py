"""Through the real runner: an agent swapping its folders with symlinks during checkpoints.

A stand-in ``claude`` (Claude Code's stream-json, in the OS sandbox) makes twelve model calls
through the meter, each prompt 1.6x the last (so each crosses the next step of the 1.5x token
grid and is snapshotted), while a process it left behind swaps two of its folders with
symlinks every 0.5 ms: one to a root-only folder holding a 0600 key, one to ``/proc/self``
(eloledger's own environment, and ``pagemap``). Its folders hold files named like the targets'.
eloledger runs with a marker in its environment and a file-size limit (a guard for this disk).
No snapshot, final copy or other file eloledger writes holds the key or the marker; every copy
is private, small and link-free.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agent_standin import MODEL_CALL, SRC, install
from sandbox_support import need_sandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux sandbox")

CANARY = "sk-canary-runner-" + "c4" * 12
MARKER = "ELOLEDGER_RUNNER_MARKER_" + "9e" * 8
STAND_IN = MODEL_CALL + r"""
for real, link, target, names in (("d", "l", plan["host"], ["id_key"]),
                                   ("p", "q", "/proc/self", ["environ", "pagemap"])):
    os.mkdir(real)
    for name in names:
        pathlib.Path(real, name).write_text("mine")
    os.symlink(target, link)
if os.fork() == 0:  # the swapper, left behind
    os.setsid()
    libc = ctypes.CDLL(None, use_errno=True)
    while True:
        libc.renameat2(-100, b"d", -100, b"l", 2)  # RENAME_EXCHANGE
        libc.renameat2(-100, b"p", -100, b"q", 2)
        time.sleep(0.0005)
total = 0
for k in range(1, 13):  # each call's prompt 1.6x the last: each crosses the 1.5x grid
    usage = model_call("word " * int(20 * 1.6 ** k))
    total += usage["input_tokens"]
    with log.open("a") as fh:
        fh.write(json.dumps({"type": "assistant", "sessionId": "sid", "requestId": f"r{k}",
            "message": {"id": f"m{k}", "model": model, "usage": usage}}) + "\n")
    emit({"type": "assistant", "message": {"id": f"m{k}", "content": [{"type": "tool_use",
          "id": f"t{k}", "name": "Bash", "input": {"command": "echo"}}],
          "usage": dict(usage, output_tokens=1)}})
    pathlib.Path("answer.txt").write_text(str(k))
    emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": f"t{k}",
          "content": "ok"}]}})
    time.sleep(0.1)
emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 12,
      "result": "done", "session_id": "sid",
      "modelUsage": {model: {"inputTokens": total, "outputTokens": 200}}})
"""
SCORER = "def score(work):\n    return float(open(work + '/answer.txt').read() or 0)\n"


def _limits() -> None:
    # the soft limit only: the sandbox sets its own (lower than a hard limit, never above)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, resource.RLIM_INFINITY))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails (EFBIG), no kill


def test_checkpoints_of_a_swapping_agent_hold_no_host_file(
    tmp_path: Path, temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_sandbox()
    if os.geteuid() != 0:
        pytest.skip("the root-only key file needs root")
    host = tmp_path / "host"
    host.mkdir(mode=0o700)
    (host / "id_key").write_text(CANARY)
    (host / "id_key").chmod(0o600)
    install(tmp_path, STAND_IN, {"host": str(host)}, monkeypatch)
    task = {"task_id": "opt", "kind": "agent", "prompt": "Improve answer.txt.",
            "files": {"answer.txt": "0"}, "scorer": SCORER}  # fmt: skip
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    (tmp_path / "spec.toml").write_text(
        '[experiment]\nname = "steer"\nprofile = "sim"\nledger = "steer.ledger.jsonl"\n'
        '[tasks]\nsource = "tasks.jsonl"\n[[arms]]\nname = "agent"\nkind = "agent"\n'
        'agent = "claude-code"\nmodel = "m"\ntimeout_s = 120\ncheckpoints = "tokens"\n'
    )
    env = {**os.environ, MARKER: "1", "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", "spec.toml", "--headless", "--quiet",
         "--bootstrap", "0"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env, preexec_fn=_limits,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(x) for x in (tmp_path / "steer.ledger.jsonl").open()]
    (session,) = [r for r in rows if r["role"] == "sample"]
    marks = [r for r in rows if r["role"] == "checkpoint"]
    assert session["status"] == "ok" and session["score"] == 12.0, session
    assert len(marks) >= 6, len(marks)  # each snapshot raced against the swapper
    leaked, total = [], 0
    for path in tmp_path.rglob("*"):
        if path.is_relative_to(host) or path.is_relative_to(tmp_path / "clients"):
            continue
        info = path.lstat()
        if stat.S_ISREG(info.st_mode):
            data = path.read_bytes()
            if CANARY.encode() in data or MARKER.encode() in data:
                leaked.append(str(path.relative_to(tmp_path)))
            total += len(data)
    assert leaked == []
    assert total < 1 << 20, total  # pagemap was never read
    evidence = Path(session["evidence"])
    for path in [*(evidence / "checkpoints").rglob("*"), *(evidence / "work").rglob("*")]:
        info = path.lstat()
        assert stat.S_IMODE(info.st_mode) == (0o700 if stat.S_ISDIR(info.st_mode) else 0o600)
        assert stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode), path
