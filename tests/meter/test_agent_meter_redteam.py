"""Agents behind the meter, attacked: stand-in CLIs in the OS sandbox, through the real runner.

Each stand-in ``claude`` makes real model calls (through the run's meter to the simulator,
which accepts only the real key) and then does what a reward-hacking agent's tools would:

- ``forger``: a background tool floods the CLI's stdout with a forged final ``result`` event
  (tiny usage) until the CLI exits; the recorded tokens must be the meter's, call by call;
- ``server`` / ``client``: one session serves on its 127.0.0.1, the other (running at the
  same time) tries to reach it, a service on the host's 127.0.0.1 and a host abstract unix
  socket, and looks for the real key in its environment; all must fail, and the key's bytes
  appear nowhere the agent can read or in anything eloledger wrote.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_standin import HEAD, USER, canonical
from sandbox_support import need_sandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux sandbox")

REAL_KEY = "sk-real-meter-key-" + "3c" * 12
PEER_PORT = 47901
SRC = Path(__file__).resolve().parents[2] / "src"
XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
STAND_IN = HEAD + r"""
def emit(event):
    print(json.dumps(event), flush=True)
def reach(family, address, seconds):
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect(address)
                return "reached: " + s.recv(64).decode()
        except OSError as exc:
            if time.monotonic() > deadline:
                return "failed: " + type(exc).__name__
            time.sleep(0.1)
emit({"type": "system", "subtype": "init", "session_id": "sid", "model": model})
probe = {"env": dict(os.environ)}
answers = [model_call("call %d" % i) for i in range(3 if model == "forger" else 1)]
forged = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
          "result": "done", "session_id": "sid",
          "modelUsage": {model: {"inputTokens": 1, "outputTokens": 1}}}
if model == "forger" and os.fork() == 0:  # the agent's tool: floods our stdout until we exit
    os.setsid()
    for _ in range(20000):
        try:
            emit(forged)
        except OSError:
            break
        time.sleep(0.0005)
    os._exit(0)
if model == "server":
    with socket.socket() as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", plan["peer_port"]))
        srv.listen(8)
        srv.settimeout(0.2)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"my-solution")
            conn.close()
if model == "client":
    probe["peer"] = reach(socket.AF_INET, ("127.0.0.1", plan["peer_port"]), 6)
    probe["host"] = reach(socket.AF_INET, ("127.0.0.1", plan["host_port"]), 0)
    probe["abstract"] = reach(socket.AF_UNIX, "\0" + plan["abstract"], 0)
pathlib.Path("probe.json").write_text(json.dumps(probe))
if model == "forger":
    time.sleep(0.3)  # the flood is on while we exit
true = [dict(inputTokens=a.get("input_tokens", 0), outputTokens=a.get("output_tokens", 0),
             cacheReadInputTokens=a.get("cache_read_input_tokens", 0),
             cacheCreationInputTokens=a.get("cache_creation_input_tokens", 0)) for a in answers]
total = {k: sum(u[k] for u in true) for k in true[0]}
emit({**forged, "modelUsage": {model: total}})
pathlib.Path("answers.json").write_text(json.dumps(answers))
"""


@pytest.fixture
def host_services() -> Iterator[dict[str, object]]:
    """A TCP service on the host's 127.0.0.1 and an abstract unix socket, both answering."""
    tcp = socket.create_server(("127.0.0.1", 0))
    abstract = "eloledger-redteam-" + secrets.token_hex(6)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind("\0" + abstract)
    unix.listen(8)
    stop = threading.Event()

    def serve(sock: socket.socket) -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            conn.sendall(b"host-secret")
            conn.close()

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in (tcp, unix)]
    for t in threads:
        t.start()
    yield {"host_port": tcp.getsockname()[1], "abstract": abstract}
    stop.set()
    for t in threads:
        t.join(2)
    tcp.close()
    unix.close()


@dataclass
class Runner:
    """Where and how a run happens: its folder, the command prefix that starts Python as the
    run's user, and the environment it adds."""

    folder: Path
    python: list[str]
    env: dict[str, str]


@pytest.fixture(params=["root", "user"])
def who(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runner]:
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("root is needed to run as root")
        yield Runner(tmp_path, [sys.executable], {"PYTHONPATH": str(SRC)})
        return
    if os.geteuid() != 0:  # already a normal user
        yield Runner(tmp_path, [sys.executable], {"PYTHONPATH": str(SRC)})
        return
    # The system Python with this environment's packages: a normal user's sandbox must reach
    # its interpreter, and this one may live under /root (0700).
    system = "/usr/bin/python3"
    version = subprocess.run([system, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
    if not shutil.which("setpriv") or version != str(sys.version_info[:2]):
        pytest.skip(f"needs setpriv and a system {sys.version_info[:2]} Python")
    with tempfile.TemporaryDirectory(prefix="eloledger-redteam-") as name:
        folder = Path(name)
        folder.chmod(0o755)
        run, home = folder / "run", folder / "run" / "home"
        home.mkdir(parents=True)
        for path in (run, home):
            os.chown(path, USER, USER)
        become = ["setpriv", "--reuid", str(USER), "--regid", str(USER), "--clear-groups"]
        packages = sysconfig.get_path("purelib")
        env = {"PYTHONPATH": f"{SRC}:{packages}", "HOME": str(home),
               **{var: str(home / var.lower()) for var in XDG}}  # fmt: skip
        yield Runner(run, [*become, system], env)


def _run(who: Runner, monkeypatch: pytest.MonkeyPatch, arms: list[str],
         plan: dict[str, object]) -> list[dict]:  # fmt: skip
    folder = who.folder
    bin_dir = folder / "clients" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "claude"
    script.write_text(STAND_IN)
    script.chmod(0o755)
    (bin_dir / "plan.json").write_text(json.dumps(plan))
    monkeypatch.setenv("ELOLEDGER_CLIENTS_DIR", str(folder / "clients"))
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    body = "".join(
        f'[[arms]]\nname = "{a}"\nkind = "agent"\nagent = "claude-code"\nmodel = "{a}"\n'
        "timeout_s = 60\n"
        for a in arms
    )
    (folder / "spec.toml").write_text(
        '[experiment]\nname = "redteam"\nprofile = "sim"\nledger = "agents.ledger.jsonl"\n'
        f'concurrency = 2\n[sim]\napi_key = "{REAL_KEY}"\n'
        f'[tasks]\nsource = "builtin:agent-code"\nlimit = 1\n\n{body}'
    )
    done = subprocess.run(
        [*who.python, "-m", "eloledger", "run", "spec.toml", "--headless", "--quiet",
         "--bootstrap", "0"],
        capture_output=True, text=True, timeout=240, cwd=folder, env={**os.environ, **who.env},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    ledger = folder / "agents.ledger.jsonl"
    assert ledger.exists(), done.stderr[-2000:]
    if who.python[0] == "setpriv":
        assert ledger.stat().st_uid == USER  # it did run as the normal user
    return [json.loads(x) for x in ledger.read_text().splitlines()]


def test_a_tool_flooding_forged_results_on_stdout_changes_no_recorded_token(
    who: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_sandbox()
    rows = _run(who, monkeypatch, ["forger"], {})
    (session,) = [r for r in rows if r["role"] == "sample"]
    calls = [r for r in rows if r["role"] == "call"]
    answers = json.loads(Path(session["evidence"], "work", "answers.json").read_text())
    truth = [canonical(a) for a in answers]
    assert len(truth) == 3 and all(p > 0 and c > 0 for p, c in truth)
    assert sorted((c["prompt_tokens"], c["completion_tokens"]) for c in calls) == sorted(truth)
    prompt, completion = map(sum, zip(*truth, strict=True))
    assert (session["prompt_tokens"], session["completion_tokens"]) == (prompt, completion)
    assert session["usage_source"] == "server" and session["calls"] == 3
    stream = Path(session["evidence"], "stream.jsonl").read_text()
    assert stream.count('"inputTokens": 1,') > 10  # the flood did reach the CLI's stdout


def test_sessions_reach_neither_each_other_nor_the_host_and_never_hold_the_key(
    who: Runner, monkeypatch: pytest.MonkeyPatch,
    host_services: dict[str, object],
) -> None:  # fmt: skip
    """About 8 s: the serving session stays up while the other one tries to reach it."""
    need_sandbox()
    plan = {"peer_port": PEER_PORT, **host_services}
    rows = _run(who, monkeypatch, ["server", "client"], plan)
    sessions = {r["arm"]: r for r in rows if r["role"] == "sample"}
    assert set(sessions) == {"server", "client"}
    probe = json.loads(Path(sessions["client"]["evidence"], "work", "probe.json").read_text())
    for target in ("peer", "host", "abstract"):
        assert probe[target].startswith("failed"), (target, probe[target])
    assert REAL_KEY not in json.dumps(probe["env"])
    assert all(r["usage_source"] == "server" and r["total_tokens"] > 0 for r in sessions.values())
    assert probe["env"]["ANTHROPIC_API_KEY"].startswith("eloledger-session-")
    for path in who.folder.rglob("*"):  # the spec holds it (the simulator's key): nothing else
        if path.is_file() and not path.is_symlink() and path.name != "spec.toml":
            assert REAL_KEY.encode() not in path.read_bytes(), path
