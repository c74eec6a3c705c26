"""Kill -9 during writes: every file is always the old or the new content, never a mix."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomlkit
from test_profiles_helpers import make_realistic_home, profile_a, profile_b

from eloledger.fsutil import atomic_write
from eloledger.profiles import store
from eloledger.profiles.edit import envedit, jsonedit
from eloledger.profiles.switch import plan_switch

ATOMIC_CHILD = """
import sys
from pathlib import Path
from eloledger.fsutil import atomic_write
path = Path(sys.argv[1])
a, b = "A" * 400_000 + "\\n", "B" * 300_000 + "\\n"
print("ready", flush=True)
while True:
    atomic_write(path, a)
    atomic_write(path, b, secret=True)
"""

SWITCH_CHILD = """
from eloledger.profiles import store
from eloledger.profiles.switch import apply_switch, plan_switch
print("ready", flush=True)
while True:
    for name in ("gw-a", "gw-b"):
        apply_switch(plan_switch(store.get_profile(name), "claude-code,codex,gemini-cli"))
"""


def _run_and_kill(code: str, args: list[str], rng: random.Random) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, env=dict(os.environ)
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.15))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)


def test_kill_during_atomic_write_leaves_old_or_new(temp_home: Path) -> None:
    rng = random.Random(1234)
    path = temp_home / "target.json"
    path.write_text("original\n")
    seen = set()
    for _ in range(12):
        _run_and_kill(ATOMIC_CHILD, [str(path)], rng)
        data = path.read_bytes()
        assert data in (b"original\n", b"A" * 400_000 + b"\n", b"B" * 300_000 + b"\n")
        seen.add(data[:1])
    assert seen & {b"A", b"B"}  # the child really did write before it was killed
    # temp files a killed writer left behind are cleaned up by the next write once stale
    leftovers = list(temp_home.glob(".target.json.*.tmp"))
    for leftover in leftovers:
        os.utime(leftover, (time.time() - 3600, time.time() - 3600))
    atomic_write(path, "final\n")
    assert list(temp_home.glob(".target.json.*.tmp")) == []
    assert path.read_text() == "final\n"


@pytest.mark.timeout(120)
def test_kill_during_switch_leaves_each_file_whole(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_A_KEY", "sk-aaaa-0123456789abcdef")
    monkeypatch.setenv("GW_B_KEY", "sk-bbbb-fedcba9876543210")
    store.save_profile(profile_a())
    store.save_profile(profile_b())
    paths = make_realistic_home(temp_home)
    urls = {None, "https://gw-a.example/api", "https://gw-b.example/anthropic"}
    rng = random.Random(99)
    for _ in range(8):
        _run_and_kill(SWITCH_CHILD, [], rng)
        settings = json.loads(paths["claude-code"].read_text())  # parses: not torn
        assert settings["hooks"] and settings["statusLine"]
        assert settings["env"].get("ANTHROPIC_BASE_URL") in urls
        assert not (
            "ANTHROPIC_AUTH_TOKEN" in settings["env"] and "ANTHROPIC_API_KEY" in settings["env"]
        )
        codex = tomlkit.parse(paths["codex"].read_text()).unwrap()
        assert codex.get("model_provider") in (None, "gw-a", "gw-b")
        assert "azure" in codex["model_providers"]
        env = envedit.parse(paths["gemini_env"].read_text(), "")
        assert env["GOOGLE_CLOUD_PROJECT"] == "my-project"
        jsonedit.parse(paths["gemini_settings"].read_text(), "", allow_comments=True)
        assert paths["claude-code"].is_symlink()
        # a crash between a file write and the ownership save is not mistaken for a hand edit
        plan = plan_switch(store.get_profile("gw-a"), "claude-code,codex,gemini-cli")
        assert plan.conflicts == []
