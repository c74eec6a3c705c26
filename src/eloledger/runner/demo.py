"""The built-in demo experiment: its spec and a fresh folder per run.

Both faces start the demo (``eloledger demo`` and the terminal app), so the spec's location and
the run-folder rule live here in the core rather than in either face.
"""

from __future__ import annotations

import time
from pathlib import Path


def demo_spec_path() -> Path:
    from importlib.resources import files  # here, not at import: keeps every command's start fast

    return Path(str(files("eloledger") / "data" / "demo" / "demo.toml"))


def demo_spec_text() -> str:
    return demo_spec_path().read_text(encoding="utf-8")


def fresh_demo_ledger() -> Path:
    """A new, empty folder for one demo run under eloledger's data directory."""
    from eloledger.locations import demo_dir

    root = demo_dir()
    folder = root / time.strftime("%Y%m%d-%H%M%S")
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = root / f"{time.strftime('%Y%m%d-%H%M%S')}-{suffix}"
    folder.mkdir(parents=True)
    return folder / "demo.ledger.jsonl"
