"""What eloledger wrote where: owned keys per file, the file's hash after our write, and
which profile is active for each target.

Why: "change only what we own" needs a memory of what we own. A key is owned once eloledger
wrote it; the value is remembered only as a hash (a value may be a key). A file whose hash
differs from the one we recorded was edited by someone else; an owned key whose value hash
differs was edited by hand, which is a conflict the user must decide on. When eloledger takes
over a key the user had set by hand, the user's value is kept (``prior``) and put back when
a later profile no longer sets that key, so a round trip leaves the file as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from eloledger.clientfacts import client_name
from eloledger.errors import UserError
from eloledger.fsutil import atomic_write, exclusive_lock, read_config_text
from eloledger.profiles.edit import MISSING, KeyPath
from eloledger.profiles.store import held_secret, hold_secret, state_dir

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTH", re.IGNORECASE)
_HELD = "$held"  # {"$held": ref}: a secret kept in the 0600 secrets file, not in the record
LOCK_TIMEOUT = 60.0  # seconds a switch waits for another one before it gives up


def state_path() -> Path:
    return state_dir() / "ownership.json"


@contextlib.contextmanager
def state_lock(timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """One writer at a time for the ownership record AND the client files it describes.

    Every switch, restore, import and doctor fix holds it from its last read to its last
    write, so two of them racing can never leave the record out of step with the files.
    """
    with exclusive_lock(
        state_dir() / "switch.lock",
        what="switching profiles, restoring a backup or applying a doctor fix",
        timeout=timeout,
    ):
        yield


def value_hash(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def encode_keypath(keypath: KeyPath) -> str:
    return ".".join(keypath) if all("." not in k for k in keypath) else json.dumps(list(keypath))


def decode_keypath(text: str) -> KeyPath:
    return tuple(json.loads(text)) if text.startswith("[") else tuple(text.split("."))


@dataclass
class FileRecord:
    sha256: str  # of the whole file after our last write
    keys: dict[KeyPath, str]  # owned key -> hash of the value we wrote
    profile: str = ""
    target: str = ""
    ts: float = field(default_factory=time.time)
    # values the user had in keys we took over; put back when we let go of the key
    prior: dict[KeyPath, Any] = field(default_factory=dict)
    # the record a switch in progress will leave; a crash between the file write and the
    # final state save leaves it here, and the file's hash tells which of the two is true
    pending: FileRecord | None = None

    def to_json(self) -> dict[str, Any]:
        data = self._plain()
        if self.pending is not None:
            data["pending"] = self.pending._plain()
        return data

    def _plain(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "keys": {encode_keypath(k): v for k, v in self.keys.items()},
            "prior": {encode_keypath(k): seal(v, k[-1]) for k, v in self.prior.items()},
            "profile": self.profile,
            "target": self.target,
            "ts": self.ts,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileRecord:
        pending = data.get("pending")
        return cls(
            sha256=data.get("sha256", ""),
            keys={decode_keypath(k): v for k, v in data.get("keys", {}).items()},
            profile=data.get("profile", ""),
            target=client_name(data.get("target", "")),  # "claude" in older records
            ts=data.get("ts", 0.0),
            prior=_unsealed(data.get("prior", {})),
            pending=cls.from_json(pending) if pending else None,
        )


def seal(value: Any, name: str) -> Any:
    """``value`` with every string under a secret-looking name replaced by a reference.

    Why: a value the user had in a key we took over is often their own key; the ownership
    record and backup manifests must hold hashes only, so the value goes to the secrets file.
    """
    if isinstance(value, dict):
        return {k: seal(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [seal(v, name) for v in value]
    if isinstance(value, str) and _SECRET_NAME.search(name):
        ref = value_hash(value)
        hold_secret(ref, value)
        return {_HELD: ref}
    return value


def unseal(value: Any) -> Any:
    """The inverse of :func:`seal`; a secret no longer in the secrets file becomes MISSING."""
    if isinstance(value, dict):
        if set(value) == {_HELD}:
            found = held_secret(str(value[_HELD]))
            return MISSING if found is None else found
        return {k: unseal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unseal(v) for v in value]
    return value


def _unsealed(prior: dict[str, Any]) -> dict[KeyPath, Any]:
    values = {decode_keypath(k): unseal(v) for k, v in prior.items()}
    return {k: v for k, v in values.items() if v is not MISSING}


@dataclass
class State:
    files: dict[str, FileRecord] = field(default_factory=dict)  # by real path
    # "claude-code:user" | "codex" | … -> profile
    active: dict[str, str] = field(default_factory=dict)

    def record(self, real: Path, text_sha256: str | None = None) -> FileRecord | None:
        """What we own in this file; with the file's current hash, a crashed switch's
        pending record wins when the file already holds what that switch wrote."""
        record = self.files.get(str(real))
        if record and record.pending and text_sha256 == record.pending.sha256:
            return record.pending
        if record and not record.sha256 and not record.keys:
            return None  # placeholder for a switch that never finished writing this file
        return record


def load_state() -> State:
    path = state_path()
    text = read_config_text(path)
    if not text:
        return State()
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UserError(
            f"{path}: eloledger's ownership record does not parse ({exc})",
            fix="delete it; eloledger then treats every key as yours (nothing is removed)",
        ) from None
    return State(
        files={p: FileRecord.from_json(r) for p, r in data.get("files", {}).items()},
        active={_in_current_names(k): v for k, v in data.get("active", {}).items()},
    )


def _in_current_names(key: str) -> str:
    """An ``active`` entry's key in the current client names (``claude:user`` in records
    written before they changed -> ``claude-code:user``)."""
    target, colon, scope = key.partition(":")
    return client_name(target) + colon + scope


def save_state(state: State) -> None:
    data = {
        "files": {p: r.to_json() for p, r in sorted(state.files.items())},
        "active": dict(sorted(state.active.items())),
    }
    # 0600: a value the user had before we took a key over may itself be a key
    text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    atomic_write(state_path(), text, secret=True)
