"""One writer per target: what eloledger wants each client's config file to say.

A writer only *describes* the desired keys (``FileTarget``); reading, diffing, ownership,
backups and the atomic write are shared (``profiles.switch``), so every target gets the same
safety. Writers follow docs/observed/clients.md (paths, header variables, precedence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.clientfacts import CLIENT_NAMES
from eloledger.errors import UserError
from eloledger.profiles.edit import KeyPath
from eloledger.profiles.model import Profile

TARGETS = CLIENT_NAMES  # claude-code, codex, gemini-cli, shell
SCOPES = ("user", "project", "local")


@dataclass
class FileTarget:
    target: str  # claude-code | codex | gemini-cli
    path: Path
    fmt: str  # json | jsonc | toml | env
    values: dict[KeyPath, Any]  # keys eloledger sets (and then owns)
    remove: dict[KeyPath, str] = field(default_factory=dict)  # keys removed even if not owned: why
    secret: bool = False  # the file will hold a key: force 0600
    notes: list[str] = field(default_factory=list)


def missing_key(profile: Profile, needs: str) -> UserError:
    """The error for a client that must find the key in its own file when there is none."""
    where = f"${profile.key_env} is not set" if profile.key_env else "the profile has no key"
    return UserError(
        f"profile {profile.name!r}: {where}, and {needs}",
        fix=f"export {profile.key_env or 'the key variable'} or store the key with "
        f"'eloledger profile edit {profile.name} --key-stdin'",
    )
