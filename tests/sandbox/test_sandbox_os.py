"""The OS sandbox itself: what a program inside can see, reach and keep running.

Each check runs a real program in a real bubblewrap sandbox (skipped, with the reason, where
none can be made) and looks at the outcome from outside.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from eloledger import sandbox
from eloledger.errors import UserError
from sandbox_support import need_sandbox, normal_user_folder, processes_with

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux sandbox")


@pytest.fixture
def bwrap() -> str:
    return need_sandbox()


def _py(code: str, **kw) -> sandbox.Result:  # noqa: ANN003
    return sandbox.run([sandbox.python(), "-I", "-S", "-c", textwrap.dedent(code)], **kw)


def test_own_uid_pid_and_no_view_of_home_or_the_caller(bwrap: str, temp_home: Path) -> None:
    (temp_home / "secret.txt").write_text("mine")
    res = _py(
        f"""
        import json, os
        try:
            env = open('/proc/1/environ', 'rb').read().decode(errors='replace')
        except OSError:
            env = "unreadable"
        seen = {{"uid": os.getuid(), "pid": os.getpid(), "ppid": os.getppid(),
                "home": os.path.exists({str(temp_home)!r}), "procs": len(
                [p for p in os.listdir('/proc') if p.isdigit()]),
                "env": env, "self": open('/proc/self/environ').read()}}
        print(json.dumps(seen))
        """
    )
    seen = json.loads(res.stdout)
    assert res.sandbox == "bwrap" and res.returncode == 0
    assert seen["uid"] not in (0, os.getuid())
    assert seen["pid"] == 2 and seen["ppid"] == 1
    assert seen["procs"] <= 3  # the sandbox's init, the program (and nothing of ours)
    assert not seen["home"]
    assert str(temp_home) not in seen["env"] + seen["self"]  # a clean environment
    assert "HOME=/tmp" in seen["self"]


def test_no_network_unless_asked(bwrap: str) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2); print("reached")
        except OSError as exc:
            print("refused", exc.errno)
        """
    try:
        assert _py(code).stdout.startswith(b"refused")
        assert _py(code, network=True).stdout.startswith(b"reached")  # agents: the gateway
    finally:
        server.close()


def test_writes_outside_the_tmpfs_fail_and_the_tmpfs_is_capped(bwrap: str, tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("before")
    rw = tmp_path / "rw"
    rw.mkdir()
    res = _py(
        f"""
        import os
        for p in [{str(target)!r}, "/usr/owned", "/etc/owned"]:
            try:
                open(p, "w").write("owned"); print("wrote", p)
            except OSError:
                pass
        open("/tmp/ok", "w").write("fine")
        open({str(rw / "out.txt")!r}, "w").write("allowed")
        try:
            with open("/tmp/big", "wb") as fh:
                for _ in range(64):
                    fh.write(b"x" * (1 << 20))
            print("filled")
        except OSError as exc:
            print("capped", exc.errno)
        """,
        rw_dirs=[rw],
        limits=sandbox.Limits(tmp_mb=8, file_mb=32),
    )
    assert b"wrote" not in res.stdout and b"capped" in res.stdout, res
    assert target.read_text() == "before"
    assert (rw / "out.txt").read_text() == "allowed"
    sandbox.chown_back(rw)


def test_process_limit_holds_and_nothing_survives(bwrap: str) -> None:
    marker = f"4243.{os.getpid()}"
    res = _py(
        f"""
        import os
        made = 0
        for _ in range(100):
            try:
                if os.fork() == 0:
                    try:
                        os.setsid()
                        if os.fork() == 0:
                            os.execvp("sleep", ["sleep", "{marker}"])
                    finally:
                        os._exit(0)
                made += 1
            except OSError:
                break
        print(made)
        """,
        limits=sandbox.Limits(nproc=10),
    )
    assert int(res.stdout) < 20  # the limit held (root included)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and processes_with(marker):
        time.sleep(0.1)
    assert processes_with(marker) == []


def test_wall_clock_and_output_limits(bwrap: str) -> None:
    slow = _py("import time\ntime.sleep(60)", limits=sandbox.Limits(wall_s=1))
    assert slow.timed_out and slow.returncode is None
    loud = _py(
        "import os\nwhile True:\n    os.write(1, b'x' * 65536)",
        limits=sandbox.Limits(output_bytes=1 << 16),
    )
    assert loud.truncated and len(loud.stdout) == 1 << 16


def test_memory_limit(bwrap: str) -> None:
    res = _py(
        "try:\n    b = bytearray(400 << 20)\n    print('got it')\nexcept MemoryError:\n"
        "    print('denied')",
        limits=sandbox.Limits(memory_mb=128),
    )
    assert res.stdout.strip() == b"denied"


def test_refusal_names_the_fix_without_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "_probe", lambda: "bwrap is not installed")
    with pytest.raises(UserError) as err:
        sandbox.resolve("auto")
    line = err.value.one_line()
    assert "bwrap is not installed" in line and "apt-get install bubblewrap" in line
    assert 'sandbox = "none"' in line and "\n" not in line
    assert sandbox.resolve("none") == "none"  # only when asked for by name


def test_as_a_normal_user_the_user_namespace_path_holds_too(bwrap: str) -> None:
    """Most users are not root: bwrap --unshare-all --uid 65534, limits set inside it."""
    import subprocess

    with normal_user_folder() as (folder, as_user):
        probe = textwrap.dedent(
            """
            import json, os
            from eloledger import sandbox
            from eloledger.judges.code import judge_tests
            res = sandbox.run([sandbox.python(), "-I", "-S", "-c", '''
            import os
            made = 0
            try:
                for _ in range(100):
                    if os.fork() == 0:
                        import time; time.sleep(2); os._exit(0)
                    made += 1
            except OSError:
                pass
            print(os.getuid(), os.getpid(), made)
            '''], limits=sandbox.Limits(nproc=10))
            honest = judge_tests("def add(a, b):\\n    return a + b", "assert add(1, 2) == 3")
            forged = judge_tests("import __main__, os\\n__main__.result = 1\\nos._exit(0)",
                                 "assert add(1, 2) == 3")
            print(json.dumps([res.stdout.decode(), honest.passed, forged.score]))
            """
        )
        done = subprocess.run([*as_user, "-c", probe], capture_output=True, text=True,
                              timeout=120, cwd=folder)  # fmt: skip
        assert done.returncode == 0, done.stderr
        inside, honest, forged = json.loads(done.stdout.splitlines()[-1])
        uid, pid, made = map(int, inside.split())
        assert (uid, pid) == (65534, 2) and made < 10
        assert honest is True and forged == 0
