"""Which profile each client is on, read from the client files themselves.

Why not only remember it: a restore, a hand edit or another tool can change a client file
after eloledger switched it, and a remembered "active" would then lie. A profile is active
for a client when eloledger's record for that client's file names the profile AND every key
it wrote there still holds the value it wrote (other edits to the file do not matter). The
shell has no file; its entry is the one the last ``--to shell`` switch remembered.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from eloledger.clientfacts import claude_settings_paths, codex_home
from eloledger.errors import UserError
from eloledger.fsutil import read_text
from eloledger.profiles.edit import MISSING, envedit, get, jsonedit, tomledit
from eloledger.profiles.ownership import FileRecord, State, load_state, value_hash


def active_targets(state: State | None = None) -> dict[str, str]:
    """{"claude-code:user" | "codex" | "gemini-cli" | "shell": profile} for what the files hold now."""
    state = load_state() if state is None else state
    newest: dict[str, tuple[float, str]] = {}
    for real, record in state.files.items():
        key = _active_key(record, Path(real))
        if not (key and record.profile) or (key in newest and newest[key][0] >= record.ts):
            continue
        if _still_holds(record, Path(real)):
            newest[key] = (record.ts, record.profile)
    found = {key: profile for key, (_ts, profile) in newest.items()}
    if "shell" in state.active:
        found["shell"] = state.active["shell"]
    return dict(sorted(found.items()))


def active_profile(state: State | None = None) -> str | None:
    """The one profile the clients are on; None when none is, or when they disagree."""
    names = set(active_targets(state).values())
    return names.pop() if len(names) == 1 else None


def _active_key(record: FileRecord, real: Path) -> str | None:
    if record.target == "claude-code":
        for scope, path in claude_settings_paths().items():
            if os.path.realpath(path) == str(real):
                return f"claude-code:{scope}"
        return None
    if record.target == "codex":  # NAME.config.toml is only used with 'codex --profile'
        main = os.path.realpath(codex_home() / "config.toml")
        return "codex" if main == str(real) else None
    return record.target or None


def _still_holds(record: FileRecord, real: Path) -> bool:
    try:
        text = read_text(real)
    except (OSError, UnicodeDecodeError):
        return False
    if text is None or not record.keys:
        return False
    try:
        data = _parse(real, text)
    except UserError:
        return False
    is_env = real.name.endswith(".env")
    for keypath, vhash in record.keys.items():
        current = data.get(keypath[0], MISSING) if is_env else get(data, keypath)
        if current is MISSING or value_hash(current) != vhash:
            return False
    return True


def _parse(real: Path, text: str) -> dict[Any, Any]:
    if real.name.endswith(".env"):
        return dict(envedit.parse(text, real))
    if real.suffix == ".toml":
        return tomledit.parse(text, real)
    return jsonedit.parse(text, real, allow_comments=True)
