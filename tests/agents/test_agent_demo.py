"""``eloledger demo --agents``: its spec, and what it says when the CLIs are not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eloledger.runner.spec import parse_spec


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "eloledger", "demo", "--agents", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


def test_print_spec_gives_claude_and_codex_agent_arms() -> None:
    out = _demo("--print-spec")
    assert out.returncode == 0
    spec = parse_spec(out.stdout)
    arms = {a.name: a for a in spec.arms}
    assert {a.agent.agent for a in spec.arms} == {"claude-code", "codex"}
    assert (arms["claude-2turns"].agent.max_turns, arms["claude-8turns"].agent.max_turns) == (2, 8)
    assert (arms["codex-1"].n, arms["codex-best3"].n) == (1, 3)
    assert spec.profile == "sim" and spec.tasks_source == "builtin:agent-code"


def test_without_the_clis_it_says_how_to_install_them(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = _demo("--headless", env=env)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "claude (claude-code), codex (codex)" in out.stderr
    assert "scripts/install_clients.sh" in out.stderr
    assert "npm install --prefix ~/xdg/eloledger-clients @anthropic-ai/claude-code" in out.stderr
    assert not list(tmp_path.rglob("*.jsonl"))  # nothing started, nothing written
