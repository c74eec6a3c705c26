"""One writer per target: what eloledger wants each client's config file to say.

A writer only *describes* the desired keys (``FileTarget``); reading, diffing, ownership,
backups and the atomic write are shared (``profiles.switch``), so every target gets the same
safety. Writers follow facts/clients.md (paths, header variables, precedence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.profiles.edit import KeyPath

TARGETS = ("claude", "codex", "gemini", "shell")
SCOPES = ("user", "project", "local")


@dataclass
class FileTarget:
    target: str  # claude | codex | gemini
    path: Path
    fmt: str  # json | jsonc | toml | env
    values: dict[KeyPath, Any]  # keys eloledger sets (and then owns)
    remove: dict[KeyPath, str] = field(default_factory=dict)  # keys removed even if not owned: why
    secret: bool = False  # the file will hold a key: force 0600
    notes: list[str] = field(default_factory=list)
