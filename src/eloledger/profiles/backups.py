"""Timestamped backups of every file before every write; the last N sets are kept.

One backup set per switch (or restore), holding a copy of each file as it was plus a manifest
(original path, whether it existed, its mode, and eloledger's ownership record for it), so
``restore`` can put back the bytes *and* the memory of what eloledger owned. Everything is
0600 in a 0700 folder: many of these files hold a key.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from eloledger.errors import UserError
from eloledger.fsutil import SECRET_MODE, atomic_write, read_text, sha256_text
from eloledger.profiles.store import data_dir

KEEP = 20


def backups_dir() -> Path:
    return data_dir() / "backups"


@dataclass
class BackupFile:
    path: str  # as the user names it (may be a symlink)
    real: str
    existed: bool
    stored: str  # file name inside the backup folder ("" when it did not exist)
    mode: int
    sha256: str
    ownership: dict[str, Any] | None  # FileRecord.to_json() at the time, or None


@dataclass
class Backup:
    id: str
    created: float
    reason: str
    profile: str
    files: list[BackupFile]

    @property
    def folder(self) -> Path:
        return backups_dir() / self.id

    def text_of(self, entry: BackupFile) -> str | None:
        return read_text(self.folder / entry.stored) if entry.existed else None


def _new_id() -> str:
    now = datetime.now(UTC)
    base = now.strftime("%Y%m%dT%H%M%S.%fZ")
    candidate, n = base, 1
    while (backups_dir() / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def create_backup(
    files: list[tuple[Path, Path, str | None, dict[str, Any] | None]],
    *,
    reason: str,
    profile: str = "",
    keep: int = KEEP,
) -> Backup:
    """Copy each (path, real path, current text, ownership record) into a new backup set."""
    root = backups_dir()
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    backup_id = _new_id()
    folder = root / backup_id
    folder.mkdir(mode=0o700)
    entries: list[BackupFile] = []
    for index, (path, real, text, record) in enumerate(files):
        stored = ""
        mode = 0o644
        if text is not None:
            stored = f"{index:02d}-{real.name}"
            atomic_write(folder / stored, text, secret=True)
            mode = real.stat().st_mode & 0o7777
        entries.append(
            BackupFile(
                str(path), str(real), text is not None, stored, mode, sha256_text(text), record
            )
        )
    backup = Backup(backup_id, time.time(), reason, profile, entries)
    manifest = {
        "id": backup.id,
        "created": backup.created,
        "reason": reason,
        "profile": profile,
        "files": [e.__dict__ for e in entries],
    }
    atomic_write(
        folder / "manifest.json",
        orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode() + "\n",
        secret=True,
    )
    prune(keep)
    return backup


def list_backups() -> list[Backup]:
    """Every backup set, oldest first."""
    root = backups_dir()
    if not root.is_dir():
        return []
    result = []
    for folder in sorted(root.iterdir()):
        text = read_text(folder / "manifest.json")
        if not text:
            continue
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        files = [BackupFile(**f) for f in data.get("files", [])]
        result.append(
            Backup(
                data["id"], data["created"], data.get("reason", ""), data.get("profile", ""), files
            )
        )
    return result


def get_backup(backup_id: str) -> Backup:
    for backup in list_backups():
        if backup.id == backup_id:
            return backup
    matches = [b for b in list_backups() if b.id.startswith(backup_id)]
    if len(matches) == 1:
        return matches[0]
    raise UserError(
        f"no backup {backup_id!r}" + (" (ambiguous prefix)" if matches else ""),
        fix="see 'eloledger profile restore --list'",
    )


def prune(keep: int = KEEP) -> None:
    sets = list_backups()
    for backup in sets[: max(0, len(sets) - keep)]:
        shutil.rmtree(backup.folder, ignore_errors=True)


def mode_of(entry: BackupFile) -> int:
    return entry.mode if entry.mode else SECRET_MODE
