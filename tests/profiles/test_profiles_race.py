"""Concurrent switches through the real CLI: one advisory lock keeps files and state in step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eloledger.fsutil import sha256_text
from eloledger.profiles import ownership

CLI = [sys.executable, "-m", "eloledger"]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


@pytest.fixture
def two_profiles(temp_home: Path) -> dict[str, str]:
    env = dict(os.environ, GW_A_KEY="sk-a-" + "a" * 24, GW_B_KEY="sk-b-" + "b" * 24)
    for name, port in (("A", 18001), ("B", 18002)):
        done = _cli(
            "profile", "add", name, "--base-url", f"http://127.0.0.1:{port}",
            "--key-env", f"GW_{name}_KEY", env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    return env


def test_racing_switches_leave_state_matching_the_files(
    temp_home: Path, two_profiles: dict[str, str]
) -> None:
    env = two_profiles
    procs = []
    for _ in range(24):
        for name in ("A", "B"):
            procs.append(
                subprocess.Popen(
                    [*CLI, "profile", "use", name, "--to", "claude-code,codex", "--yes", "-q"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                )
            )
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    state = ownership.load_state()
    assert state.files, "the switches recorded nothing"
    for real, record in state.files.items():
        text = Path(real).read_text(encoding="utf-8")
        assert record.pending is None
        assert record.sha256 == sha256_text(text), f"{real}: state and file disagree"
    done = _cli("profile", "use", "B", "--to", "claude-code,codex", "--yes", "-q", env=env)
    assert done.returncode == 0, done.stderr
    assert "changed by hand" not in done.stderr
    assert ownership.load_state().active["claude-code:user"] == "B"


def test_a_held_lock_names_its_holder_after_the_timeout(temp_home: Path) -> None:
    from eloledger.errors import UserError

    holder = subprocess.Popen(
        [
            sys.executable, "-c",
            "import sys, time\n"
            "from eloledger.profiles.ownership import state_lock\n"
            "with state_lock():\n"
            "    print('held', flush=True); time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UserError) as caught, ownership.state_lock(timeout=0.3):
            pass
        assert f"pid {holder.pid}" in str(caught.value)
    finally:
        holder.kill()
        holder.wait()
    # the kernel dropped the dead holder's lock, and a holder may re-enter its own lock
    with ownership.state_lock(timeout=5), ownership.state_lock(timeout=0):
        pass
