"""Plan and apply a profile switch across several files, all or nothing.

``plan_switch`` reads every target file, refuses any that does not parse (nothing is written),
computes the new text by changing only owned keys, and reports conflicts (owned keys edited by
hand since our last write). ``apply_switch`` backs everything up, writes each changed file
atomically and, if any write fails, puts the already-written files back before raising.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eloledger.clientfacts import client_name
from eloledger.errors import UserError
from eloledger.fsutil import (
    atomic_write,
    read_config_text,
    real_path,
    remove_file,
    sha256_text,
)
from eloledger.profiles import backups, ownership
from eloledger.profiles.backups import Backup, list_backups  # noqa: F401 - public API
from eloledger.profiles.edit import DELETE, MISSING, KeyPath, envedit, get, jsonedit, tomledit
from eloledger.profiles.model import Profile
from eloledger.profiles.ownership import FileRecord, State, value_hash
from eloledger.profiles.store import resolve_key
from eloledger.profiles.writers import (
    SCOPES,
    TARGETS,
    FileTarget,
    claude,
    codex,
    gemini,
    missing_key,
)
from eloledger.redact import mask, register_secret, scrub
from eloledger.words import plural

CONFLICT_POLICIES = ("refuse", "overwrite", "keep")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
# The user's own secrets beside the keys we edit (a GITHUB_TOKEN in the same env block) show up
# in the diff's context lines: names ending like these have their values masked there too.
_USER_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_PLACEHOLDER_START = "<key"  # a preview's stand-in for a key that is not available
_KEY_POINTERS = frozenset({"env_key"})  # Codex: the NAME of the variable holding the key


@dataclass
class FilePlan:
    target: str
    path: Path  # as the client looks for it (may be a symlink)
    real: Path
    old_text: str | None  # None: the file does not exist yet
    new_text: str
    secret: bool
    owned: dict[KeyPath, str]  # what we will own after the write
    prior: dict[KeyPath, Any] = field(default_factory=dict)  # user values we took over
    conflicts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    diff: str = ""  # unified diff, secrets masked

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text


@dataclass
class SwitchPlan:
    profile: Profile
    targets: list[str]
    scope: str
    files: list[FilePlan]
    on_conflict: str = "refuse"
    notes: list[str] = field(default_factory=list)
    codex_profile_file: bool = False  # codex keys went to <name>.config.toml
    key_missing: bool = False  # a preview: the diff shows where the key would come from

    @property
    def changed(self) -> bool:
        return any(f.changed for f in self.files)

    @property
    def conflicts(self) -> list[str]:
        return [c for f in self.files for c in f.conflicts]

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)

    def active_keys(self) -> list[str]:
        if self.codex_profile_file:  # config.toml still says what it said: codex is not "on" it
            return [_active_key(t, self.scope) for t in self.targets if t != "codex"]
        return [_active_key(t, self.scope) for t in self.targets]


def missing_key_placeholder(profile: Profile) -> str:
    """What a preview shows in place of a key that is not available (never a secret)."""
    if profile.key_env:
        return f"{_PLACEHOLDER_START} from ${profile.key_env}: not set>"
    return f"{_PLACEHOLDER_START}: none stored>"


def _active_key(target: str, scope: str) -> str:
    return f"claude-code:{scope}" if target == "claude-code" else target


def parse_targets(text: str | Iterable[str]) -> list[str]:
    """``--to`` as target names; the old spellings (``claude``, ``gemini``) still work."""
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [client_name(t.strip()) for t in items if t.strip()]
    if "all" in names:
        return list(TARGETS)
    bad = [t for t in names if t not in TARGETS]
    if bad or not names:
        raise UserError(
            f"unknown target(s) {', '.join(bad) or '(none)'}",
            fix=f"use a comma-separated list of {', '.join(TARGETS)} (or 'all')",
        )
    return list(dict.fromkeys(names))


def _parse(fmt: str, text: str, path: Path) -> dict[str, Any]:
    if fmt in ("json", "jsonc"):
        return jsonedit.parse(text, path, allow_comments=fmt == "jsonc")
    if fmt == "toml":
        return tomledit.parse(text, path)
    return {(k,): v for k, v in envedit.parse(text, path).items()}  # type: ignore[misc]


def _get(fmt: str, data: Mapping[Any, Any], keypath: KeyPath) -> Any:
    if fmt == "env":
        return data.get(keypath, MISSING)
    return get(data, keypath)


def _edit(fmt: str, text: str, changes: dict[KeyPath, Any], path: Path) -> str:
    if fmt in ("json", "jsonc"):
        return jsonedit.apply(text, changes, path, allow_comments=fmt == "jsonc")
    if fmt == "toml":
        return tomledit.apply(text, changes, path)
    return envedit.apply(text, {k[0]: v for k, v in changes.items()}, path)


def plan_switch(
    profile: Profile,
    targets: Iterable[str] | str,
    scope: str = "user",
    *,
    on_conflict: str = "refuse",
    key: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    state: State | None = None,
    codex_profile_file: bool = False,
    preview: bool = False,
) -> SwitchPlan:
    """What ``use`` would write, file by file; reads only, writes nothing.

    ``preview``: a diff is wanted even when the key is not available (URLs and settings need
    no key); the key's lines then say where it would come from, and the plan cannot be
    applied (:func:`apply_switch` refuses it with the missing-key error).
    """
    names = targets.split(",") if isinstance(targets, str) else list(targets)
    everything = "all" in [n.strip() for n in names]
    targets = parse_targets(names)
    if everything:  # 'all' means every client this gateway serves
        targets = [t for t in targets if t == "shell" or profile.serves(t)]
    if scope not in SCOPES:
        raise UserError(f"unknown scope {scope!r}", fix=f"use one of {', '.join(SCOPES)}")
    if on_conflict not in CONFLICT_POLICIES:
        raise ValueError(on_conflict)
    profile.validate()
    for target in targets:
        if target != "shell" and not profile.serves(target):
            raise UserError(
                f"profile {profile.name!r} does not serve {target} (it serves "
                f"{', '.join(profile.clients)}); the client would get 404s",
                fix="pick other targets or set a per-client base_url override",
            )
    state = ownership.load_state() if state is None else state
    key = key if key is not None else resolve_key(profile)
    env = os.environ if env is None else env
    key_missing = preview and not key
    if key_missing:
        key = missing_key_placeholder(profile)

    wanted: list[FileTarget] = []
    texts: dict[Path, str | None] = {}
    parsed: dict[Path, dict[str, Any]] = {}
    plan = SwitchPlan(profile, targets, scope, [], on_conflict)
    plan.codex_profile_file = codex_profile_file
    plan.key_missing = key_missing
    for target in targets:
        if target == "claude-code":
            wanted += claude.targets(profile, key, scope, env, cwd)
        elif target == "gemini-cli":
            wanted += gemini.targets(profile, key, env)
        elif target == "codex":
            path = codex.config_path(profile, env, codex_profile_file)
            text = read_config_text(path)
            data = tomledit.parse(text or "", path)
            record = state.record(real_path(path), sha256_text(text))
            owned = set(record.keys) if record else set()
            wanted += codex.targets(profile, data, owned, env, profile_file=codex_profile_file)
        elif target == "shell":
            plan.notes.append(f'shell: run eval "$(eloledger env {profile.name})"')
    # Parse everything first: one bad file means nothing is written.
    for ft in wanted:
        text = read_config_text(ft.path)
        texts[ft.path] = text
        parsed[ft.path] = _parse(ft.fmt, text or "", ft.path)
    for ft in wanted:
        plan.files.append(_plan_file(ft, texts[ft.path], parsed[ft.path], state, on_conflict))
        plan.notes += ft.notes
    return plan


def _plan_file(
    ft: FileTarget,
    old: str | None,
    data: dict[str, Any],
    state: State,
    on_conflict: str,
) -> FilePlan:
    real = real_path(ft.path)
    record = state.record(real, sha256_text(old))
    previous = record.keys if record else {}
    edited = record is not None and old is not None and record.sha256 != sha256_text(old)
    conflicts: list[str] = []
    skip: set[KeyPath] = set()
    if edited:
        for keypath, vhash in previous.items():
            current = _get(ft.fmt, data, keypath)
            if current is MISSING:
                what = "removed by hand"
            elif value_hash(current) != vhash:
                what = "changed by hand"
            else:
                continue
            if (
                keypath in ft.values
                and current is not MISSING
                and value_hash(current) == value_hash(ft.values[keypath])
            ):
                continue  # the hand edit already says what we want
            conflicts.append(
                f"{ft.path}: '{'.'.join(keypath)}' was {what} since eloledger wrote it"
            )
            if on_conflict == "keep":
                skip.add(keypath)
    prior = dict(record.prior) if record else {}
    changes: dict[KeyPath, Any] = {}
    for keypath in previous:
        if keypath not in ft.values and keypath not in skip:
            changes[keypath] = prior.pop(keypath, DELETE)  # give the user's value back
    for keypath in ft.values:
        current = _get(ft.fmt, data, keypath)
        if keypath not in previous and current is not MISSING:
            prior[keypath] = current  # taking over a key the user set by hand
    for keypath in ft.remove:
        if _get(ft.fmt, data, keypath) is not MISSING and keypath not in skip:
            changes[keypath] = DELETE
    for keypath, value in ft.values.items():
        if keypath not in skip:
            changes[keypath] = value
    for keypath, value in [*changes.items(), *((k, _get(ft.fmt, data, k)) for k in changes)]:
        if (
            isinstance(value, str)
            and _SECRET_NAME.search(keypath[-1])
            and not value.startswith(_PLACEHOLDER_START)
        ):
            register_secret(value)  # so the diff masks keys we add, restore or remove
    new = _edit(ft.fmt, old or "", changes, ft.path)
    if old is None and not new.strip():
        old = new = ""  # nothing to create: leave the absent file absent
    owned = {k: value_hash(v) for k, v in ft.values.items() if k not in skip}
    prior = {k: v for k, v in prior.items() if k in owned}
    notes = [
        f"{ft.path}: removes '{'.'.join(k)}' ({why})"
        for k, why in ft.remove.items()
        if changes.get(k) is DELETE and k not in previous
    ]
    plan = FilePlan(
        ft.target,
        ft.path,
        real,
        old,
        new,
        ft.secret,
        owned,
        prior,
        conflicts if on_conflict != "keep" else [],
        notes,
    )
    plan.diff = _diff(plan, set(user_secrets(data)))
    return plan


def user_secrets(data: Any, name: str = "") -> Iterator[str]:
    """String values stored under secret-looking names, at any depth of a parsed config.

    A diff's context lines may show the user's own tokens next to the key being edited; these
    are the values to mask there (the doctor's fix diffs use it too).
    """
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from user_secrets(value, key[-1] if isinstance(key, tuple) else str(key))
    elif isinstance(data, list):
        for item in data:
            yield from user_secrets(item, name)
    elif (
        isinstance(data, str)
        and len(data) >= 8
        and name not in _KEY_POINTERS
        and _USER_SECRET_NAME.search(name)
    ):
        yield data


def _diff(plan: FilePlan, hidden: set[str]) -> str:
    if not plan.changed:
        return ""
    return masked_diff(plan.path, plan.old_text, plan.new_text, hidden)


def masked_diff(path: Path, old_text: str | None, new_text: str, hidden: set[str]) -> str:
    """Unified diff, every line newline-terminated; registered and ``hidden`` secrets masked."""
    old = (old_text or "").splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    label = str(path)
    lines = difflib.unified_diff(
        old, new, fromfile=label if old_text is not None else "/dev/null", tofile=label
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    for secret in sorted(hidden, key=len, reverse=True):
        text = text.replace(secret, mask(secret))
    return scrub(text)


def apply_switch(plan: SwitchPlan, *, reason: str = "switch") -> list[Path]:
    """Write the plan, all or nothing; return the paths written (empty when nothing changed).

    Holds :func:`ownership.state_lock`, so a plan made outside it that another switch made
    stale is refused ("changed while the switch was being planned") instead of half-applied.
    """
    with ownership.state_lock():
        return _apply_switch(plan, reason)


def _apply_switch(plan: SwitchPlan, reason: str) -> list[Path]:
    if plan.key_missing:
        raise missing_key(plan.profile, "the switch writes it into the client configs")
    if plan.conflicts and plan.on_conflict == "refuse":
        raise UserError(
            "; ".join(plan.conflicts),
            fix="rerun with --force to overwrite your edits or --keep-edits to keep them",
        )
    state = ownership.load_state()
    changed = [f for f in plan.files if f.changed]
    for f in changed:
        now = read_config_text(f.path)
        if now != f.old_text:
            raise UserError(
                f"{f.path}: changed while the switch was being planned; nothing was written",
                fix="run the command again",
            )
    if changed:
        backups.create_backup(
            [(f.path, f.real, f.old_text, _record_json(state, f.real)) for f in changed],
            reason=reason,
            profile=plan.profile.name,
        )
    for f in plan.files:  # settle what an earlier, crashed switch left pending
        current = state.record(f.real, sha256_text(f.old_text))
        if current is None:
            state.files.pop(str(f.real), None)
        else:
            current.pending = None
            state.files[str(f.real)] = current
    final = {str(f.real): _final_record(plan, f) for f in plan.files}
    for f in changed:  # journal first: a crash mid-switch must not look like a hand edit
        record = state.files.setdefault(str(f.real), FileRecord(sha256="", keys={}))
        record.pending = final[str(f.real)]
    ownership.save_state(state)
    written: list[FilePlan] = []
    try:
        for f in changed:
            atomic_write(f.path, f.new_text, secret=f.secret)
            written.append(f)
    except BaseException as exc:
        failed = changed[len(written)]
        _roll_back(written)
        for f in changed:
            record = state.files[str(f.real)]
            record.pending = None
            if not record.sha256 and not record.keys:
                del state.files[str(f.real)]
        ownership.save_state(state)
        raise UserError(
            f"{failed.path}: could not write ({exc.__class__.__name__}: {exc}); "
            f"rolled back {plural(len(written), 'file')} already written, nothing was changed",
            fix="fix the cause (permissions, a file where a folder should be, disk space) and retry",
        ) from exc
    state.files.update(final)
    for key in plan.active_keys():
        state.active[key] = plan.profile.name
    ownership.save_state(state)
    return [f.path for f in written]


def _final_record(plan: SwitchPlan, f: FilePlan) -> FileRecord:
    return FileRecord(
        sha256=sha256_text(f.new_text),
        keys=f.owned,
        profile=plan.profile.name,
        target=f.target,
        prior=f.prior,
    )


def _record_json(state: State, real: Path) -> dict[str, Any] | None:
    record = state.record(real)
    return record.to_json() if record else None


def _roll_back(written: list[FilePlan]) -> None:
    for f in reversed(written):
        if f.old_text is None:
            remove_file(f.path)
        else:
            atomic_write(f.path, f.old_text)


def restore(path: Path | str | None, backup_id: str) -> list[Path]:
    """Put back one file (or, with ``path=None``, every file) from a backup set.

    The current content is backed up first, so a restore can itself be undone.
    """
    with ownership.state_lock():
        return _restore(path, backup_id)


def _restore(path: Path | str | None, backup_id: str) -> list[Path]:
    backup = backups.get_backup(backup_id)
    entries = backup.files
    if path is not None:
        wanted = real_path(Path(path).expanduser())
        entries = [e for e in entries if Path(e.real) == wanted or Path(e.path) == Path(path)]
        if not entries:
            raise UserError(
                f"backup {backup.id} has no copy of {path}",
                fix="see 'eloledger profile restore --list'",
            )
    state = ownership.load_state()
    current = [(Path(e.path), Path(e.real), read_config_text(Path(e.path)), e) for e in entries]
    backups.create_backup(
        [(p, r, text, _record_json(state, r)) for p, r, text, _ in current],
        reason=f"before restore of {backup.id}",
    )
    done: list[Path] = []
    for p, real, _text, entry in current:
        content = backup.text_of(entry)
        if content is None:
            remove_file(p)
        else:
            atomic_write(p, content, mode=backups.mode_of(entry))
        if entry.ownership:
            state.files[str(real)] = FileRecord.from_json(entry.ownership)
        else:
            state.files.pop(str(real), None)
        done.append(p)
    from eloledger.profiles.active import active_targets

    state.active = active_targets(state)  # the remembered "active" follows the restored files
    ownership.save_state(state)
    return done
