"""Apply a doctor fix that is a one-key edit of a live config file: diff first, backup, atomic.

Why here and not in the switch code: a doctor fix is not a profile switch (no ownership of the
key is taken), but it must keep the same promises: only the target key changes (the
byte-preserving editors in :mod:`eloledger.profiles.edit`), a backup set exists before the
write (so ``eloledger profile restore`` undoes it), and the write is atomic and follows
symlinks (:mod:`eloledger.fsutil`).
"""

from __future__ import annotations

from typing import Any

from eloledger.doctor.findings import FixAction
from eloledger.errors import UserError
from eloledger.fsutil import atomic_write, read_config_text, real_path
from eloledger.profiles import backups, ownership
from eloledger.profiles.edit import DELETE, envedit, jsonedit, tomledit
from eloledger.profiles.switch import masked_diff, user_secrets

__all__ = ["FixAction", "apply_fix", "apply_profile_fix", "plan_fix"]

_UNSET = object()  # apply_fix without a planned text: plan now


def plan_fix(action: FixAction) -> tuple[str | None, str, str]:
    """(old text or None when the file is absent, new text, unified diff with secrets masked).

    Raises UserError when the file does not parse (nothing is written then or later).
    """
    old = read_config_text(action.path)
    text = old or ""
    data = _parse(action, text)
    value = DELETE if action.value is None else action.value
    if action.format == "env":
        new = envedit.apply(text, {action.keypath[-1]: value}, action.path)
    elif action.format == "toml":
        new = tomledit.apply(text, {action.keypath: value}, action.path)
    else:
        new = jsonedit.apply(
            text, {action.keypath: value}, action.path, allow_comments=action.format == "jsonc"
        )
    return old, new, masked_diff(action.path, old, new, set(user_secrets(data)))


def apply_fix(action: FixAction, planned_old: Any = _UNSET) -> str:
    """Back the file up, write the fixed text atomically; return the backup set's id.

    ``planned_old`` is the old text :func:`plan_fix` showed (None: the file was absent); if the
    file no longer holds it, nothing is written (the user confirmed a diff that is out of date).
    Holds the switch lock: a fix and a profile switch never write the same file at once.
    """
    with ownership.state_lock():
        return _apply_fix(action, planned_old)


def _apply_fix(action: FixAction, planned_old: Any) -> str:
    old, new, _diff_text = plan_fix(action)
    if planned_old is not _UNSET and old != planned_old:
        raise UserError(
            f"{action.path}: changed since the fix was shown; nothing was written",
            fix="check again and look at the new diff before applying",
        )
    if new == old:
        raise UserError(
            f"{action.path}: already fixed ({action.summary}); nothing was written",
            fix="check again",
        )
    real = real_path(action.path)
    record = ownership.load_state().record(real)
    backup = backups.create_backup(
        [(action.path, real, old, record.to_json() if record else None)],
        reason=f"doctor fix: {action.summary}",
    )
    if read_config_text(action.path) != old:  # a writer slipped in between the read and the backup
        raise UserError(
            f"{action.path}: changed while the fix was being applied; nothing was written",
            fix="check again and apply the fix again",
        )
    atomic_write(action.path, new)
    return backup.id


def apply_profile_fix(profile: Any, summary: str) -> str:
    """Save a profile the doctor corrected, after backing up the profiles file; the backup id.

    Why here: every write to a user's file, from any face, leaves a backup set that
    ``eloledger profile restore`` lists (the TUI's ``a`` on a profile URL finding once wrote
    the profiles file with none). Uses the profiles package's backup API as it is.
    """
    from eloledger.profiles.store import profiles_path, save_profile

    with ownership.state_lock():
        path = profiles_path()
        real = real_path(path)
        old = read_config_text(path)
        backup = backups.create_backup(
            [(path, real, old, None)], reason=f"doctor fix: {summary}", profile=profile.name
        )
        save_profile(profile)
        return backup.id


def _parse(action: FixAction, text: str) -> Any:
    if action.format == "env":
        return envedit.parse(text, action.path)
    if action.format == "toml":
        return tomledit.parse(text, action.path)
    return jsonedit.parse(text, action.path, allow_comments=action.format == "jsonc")
