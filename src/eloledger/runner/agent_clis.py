"""The agent CLIs eloledger can run as arms: their modules, where they are installed, and
which flags each one has (for validating a spec's ``args`` before anything runs)."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path
from types import ModuleType

from eloledger import clients_dir
from eloledger.agents.claude_code import headless as claude_headless
from eloledger.agents.codex import headless as codex_headless
from eloledger.agents.gemini_cli import headless as gemini_headless

HEADLESS: dict[str, ModuleType] = {
    "claude-code": claude_headless,
    "codex": codex_headless,
    "gemini-cli": gemini_headless,
}
AGENTS = tuple(HEADLESS)
INSTALL_HINT = "install the agent CLIs with scripts/install_clients.sh"
# Flags the CLIs accept but do not list in --help (docs/observed/agents.md).
_HIDDEN_FLAGS = {"claude-code": {"--max-turns"}}
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[A-Za-z])\b")


def clients_bin_dirs() -> list[Path]:
    """Where installed CLIs are looked up first (the rules of :mod:`eloledger.clients_dir`)."""
    return clients_dir.bin_dirs()


def find_cli(agent: str) -> Path | None:
    """The CLI's executable: the install script's folder first, then PATH."""
    return clients_dir.find(HEADLESS[agent].BINARY)


@cache
def known_flags(executable: str, agent: str) -> frozenset[str]:
    """Every flag the CLI's help lists (codex: of ``codex exec``), plus hidden ones we know."""
    argv = [executable, "exec", "--help"] if agent == "codex" else [executable, "--help"]
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    flags = set(_FLAG.findall(out.stdout + out.stderr))
    return frozenset(flags | _HIDDEN_FLAGS.get(agent, set()))


def unknown_flag(agent: str, executable: Path, args: list[str]) -> str | None:
    """The first flag in ``args`` that the CLI does not have (None when all are known)."""
    flags = known_flags(str(executable), agent)
    if not flags:
        return None  # the help could not be read: let the CLI itself complain
    for arg in args:
        if arg.startswith("-") and arg != "-":
            name = arg.split("=", 1)[0]
            if name not in flags:
                return name
    return None
