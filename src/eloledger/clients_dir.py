"""Where the real agent CLIs (Claude Code, Codex, Gemini CLI) are installed: one rule for all.

``scripts/install_clients.sh`` installs into :func:`install_dir`; the runner and the tests look
in :func:`bin_dirs` (then on PATH). The folder is, first found:

1. ``$ELOLEDGER_CLIENTS_DIR`` (an npm prefix: the CLIs are in its ``node_modules/.bin``);
2. ``$XDG_CACHE_HOME/eloledger-clients`` when ``XDG_CACHE_HOME`` is an absolute path;
3. ``~/.cache/eloledger-clients`` (``$HOME`` at the time of the call).

Lookups also try the later folders, so CLIs installed before ``XDG_CACHE_HOME`` was set are
still found. Standard library only: the install script runs this file directly
(``python3 src/eloledger/clients_dir.py``) before eloledger is installed.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

ENV = "ELOLEDGER_CLIENTS_DIR"
NAME = "eloledger-clients"


def candidates(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every install folder the rules name, most specific first, without repeats."""
    env = os.environ if env is None else env
    found: list[Path] = []
    if env.get(ENV):
        found.append(Path(env[ENV]).expanduser())
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        found.append(Path(xdg) / NAME)
    home = env.get("HOME") or os.path.expanduser("~")
    found.append(Path(home) / ".cache" / NAME)
    return list(dict.fromkeys(found))


def install_dir(env: Mapping[str, str] | None = None) -> Path:
    """The folder ``scripts/install_clients.sh`` installs into."""
    return candidates(env)[0]


def bin_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """The ``node_modules/.bin`` folders the CLIs are looked up in, in order."""
    return [folder / "node_modules" / ".bin" for folder in candidates(env)]


def find(binary: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The executable ``binary`` (claude, codex, gemini): the install folders first, then PATH."""
    for folder in bin_dirs(env):
        candidate = folder / binary
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    path = None if env is None else env.get("PATH", "")
    found = shutil.which(binary, path=path)
    return Path(found) if found else None


if __name__ == "__main__":  # for the install script: print the install folder
    print(install_dir())
    sys.exit(0)
