"""``eloledger demo --agents``: real Claude Code and Codex sessions on the embedded simulator.

The spec (data/demo/agents.toml) compares Claude Code with 2 vs 8 turns and Codex with one
session vs the best of three, on the built-in agent tasks. It needs the two CLIs; when they
are missing the demo says how to install them instead of failing half-way.
"""

from __future__ import annotations

from pathlib import Path

from eloledger.clients_dir import install_dir
from eloledger.errors import UserError
from eloledger.runner.agent_clis import HEADLESS, find_cli

DEMO_AGENTS = ("claude-code", "codex")
NPM_PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


def agents_spec_path() -> Path:
    from importlib.resources import files

    return Path(str(files("eloledger") / "data" / "demo" / "agents.toml"))


def require_demo_clis() -> None:
    """A one-line error naming the missing CLIs and the install command, when any is missing."""
    missing = [a for a in DEMO_AGENTS if find_cli(a) is None]
    if not missing:
        return
    names = ", ".join(f"{HEADLESS[a].BINARY} ({a})" for a in missing)
    packages = " ".join(NPM_PACKAGES[a] for a in missing)
    raise UserError(
        f"demo --agents runs the real Claude Code and Codex CLIs; not installed: {names}",
        fix="run scripts/install_clients.sh (from a source checkout), or "
        f"npm install --prefix {_shown(install_dir())} {packages}",
    )


def _shown(folder: Path) -> str:
    """``folder`` with the home folder as ``~`` (shorter, and the same for every user)."""
    home = Path.home()
    return "~/" + str(folder.relative_to(home)) if folder.is_relative_to(home) else str(folder)
