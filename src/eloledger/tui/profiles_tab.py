"""The Profiles tab: profiles and presets, add/edit with as-you-type URL checks, switch with a
diff first (all or nothing), backups and restore, and what each client will actually use.

Everything goes through the core the CLI uses: ``profiles.store`` (load/save), ``doctor.urls``
(the checks as you type), ``profiles.switch`` (plan -> diff -> apply; restore),
``doctor.effective`` (value + source per client). File work runs in thread workers.

The tab is a composition: ``ProfileList`` (left) and ``ProfileDetail`` (right) only show what the
tab hands them; ``ProfileForm``, ``SwitchScreen`` and ``BackupsScreen`` are dialogs that return
their answer; the tab holds the data and the workers, and asks the app for its tab by message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import OptionList

from eloledger.tui.errors import error_text
from eloledger.tui.messages import ShowTab
from eloledger.tui.profile_backups import BackupsScreen
from eloledger.tui.profile_detail import ProfileDetail
from eloledger.tui.profile_form import ProfileForm
from eloledger.tui.profile_list import ProfileList
from eloledger.tui.profile_switch import SwitchScreen
from eloledger.words import plural

__all__ = ["BackupsScreen", "ProfileForm", "ProfilesTab", "SwitchScreen"]


def missing_key_placeholder(profile: Any) -> str | None:
    """A stand-in for a key that is not set (for a preview), or None when a key is there."""
    from eloledger.profiles.store import resolve_key

    if resolve_key(profile):
        return None
    return f"<${profile.key_env or 'key'} not set>"


def active_targets() -> dict[str, list[str]]:
    """Profile -> the client targets it is active for, from the switcher's own state file."""
    try:
        from eloledger.profiles.ownership import load_state

        active = load_state().active
    except Exception:  # an unreadable state file must not keep the tab from loading
        return {}
    found: dict[str, list[str]] = {}
    for target, name in sorted(active.items()):
        found.setdefault(name, []).append(target)
    return found


class ProfilesTab(Horizontal):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new", "New"),
        Binding("e", "edit", "Edit"),
        Binding("u", "use", "Use (switch)"),
        Binding("b", "backups", "Backups"),
        Binding("r", "reload", "Reload"),
    ]
    DEFAULT_CSS = """
    ProfilesTab { height: 1fr; }
    ProfilesTab #profile-list { width: 26; height: 1fr; }
    ProfilesTab #profile-detail { width: 1fr; height: 1fr; padding: 0 1; }
    ProfilesTab #profile-effective { margin-top: 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.profiles: dict[str, Any] = {}
        self.presets: dict[str, Any] = {}
        self.effective: dict[str, list[Any]] = {}
        self.last_applied: list[Any] = []
        self.active: dict[str, list[str]] = {}  # profile -> the targets it is active for
        self._select_after: str | None = None

    def compose(self) -> ComposeResult:
        yield ProfileList(id="profile-list")
        yield ProfileDetail(id="profile-detail")

    def on_mount(self) -> None:
        self.action_reload()

    # -- data -----------------------------------------------------------------------------------

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="profiles-load")
    def _load(self) -> None:
        error = ""
        profiles: dict[str, Any] = {}
        presets: dict[str, Any] = {}
        effective: dict[str, list[Any]] = {}
        try:
            from eloledger.profiles.presets import PRESETS
            from eloledger.profiles.store import load_profiles

            presets = dict(PRESETS)
            profiles = load_profiles()
        except Exception as exc:
            error = error_text(exc)
        active = active_targets()
        try:
            from eloledger.doctor.effective import effective_settings

            effective = effective_settings()
        except Exception as exc:
            error = error or error_text(exc)
        self.active = active
        self.app.call_from_thread(self._loaded, profiles, presets, effective, error)

    def _loaded(self, profiles: dict, presets: dict, effective: dict, error: str) -> None:
        self.profiles, self.presets, self.effective = profiles, presets, effective
        highlight = self._select_after or self.selected_name()
        self._select_after = None
        self.query_one(ProfileList).show(profiles, presets, self.active, highlight)
        detail = self.query_one(ProfileDetail)
        detail.show_effective(effective)
        self._show_selected()
        if error:
            detail.show_error(error)

    def selected_name(self) -> str | None:
        return self.query_one(ProfileList).selected_name()

    def selected(self) -> Any | None:
        name = self.selected_name()
        if name is None:
            return None
        return self.profiles.get(name) or self.presets.get(name)

    @on(OptionList.OptionHighlighted, "#profile-list")
    def _highlighted(self) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        profile = self.selected()
        preset = profile is not None and profile.name not in self.profiles
        active_for = self.active.get(profile.name, []) if profile is not None else []
        self.query_one(ProfileDetail).show(profile, preset=preset, active_for=active_for)

    # -- actions --------------------------------------------------------------------------------

    def action_new(self) -> None:
        self.app.push_screen(ProfileForm(), self._save)

    def action_edit(self) -> None:
        profile = self.selected()
        if profile is None:
            return
        if profile.name not in self.profiles:
            self.notify(
                "Presets are read-only here: 'n' and give it a name to copy it, or "
                "'eloledger profile add NAME --preset P'.",
                severity="warning",
            )
            return
        self.app.push_screen(ProfileForm(profile), self._save)

    def _save(self, profile: Any | None) -> None:
        if profile is None:
            return
        from eloledger.profiles.store import save_profile

        try:
            path = save_profile(profile)
        except Exception as exc:
            self.notify(error_text(exc), title="Not saved", severity="error", timeout=10)
            return
        self.notify(f"Saved profile {profile.name} in {path}", timeout=5)
        self._select_after = profile.name
        self.action_reload()

    def action_use(self) -> None:
        profile = self.selected()
        if profile is None:
            return

        def chosen(answer: tuple[list[str], str] | None) -> None:
            if answer is not None:
                self._plan(profile, *answer)

        self.app.push_screen(SwitchScreen(profile), chosen)

    @work(thread=True, exclusive=True, group="profiles-switch")
    def _plan(self, profile: Any, targets: list[str], scope: str) -> None:
        from eloledger.profiles.switch import plan_switch

        preview = ""
        try:
            try:
                plan = plan_switch(profile, targets, scope)
            except Exception:
                placeholder = missing_key_placeholder(profile)
                if placeholder is None:
                    raise
                # No key in the environment: the URLs and settings can still be shown; the key
                # appears as a placeholder and nothing can be applied.
                plan = plan_switch(profile, targets, scope, key=placeholder)
                preview = (
                    f"preview only: ${profile.key_env} is not set, so the key is shown as "
                    f"{placeholder}; export it (or store the key) to apply"
                )
        except Exception as exc:
            self.app.call_from_thread(
                self.notify, error_text(exc), title="Cannot switch", severity="error", timeout=12
            )
            return
        self.app.call_from_thread(self._confirm_plan, plan, preview)

    def _confirm_plan(self, plan: Any, preview: str = "") -> None:
        from eloledger.tui.dialogs import DiffScreen

        diffs = [(str(f.path), f.diff) for f in plan.files if f.changed]
        title = f"Switch to {plan.profile.name}: {plural(len(diffs), 'file')} change (secrets masked)"
        notes = ([preview] if preview else []) + plan.notes
        notes += [f"conflict: {c}" for c in plan.conflicts]
        if notes:
            title += "\n" + "\n".join(notes)

        def answer(apply: bool | None) -> None:
            if apply:
                self._apply(plan)

        can_apply = bool(diffs) and not preview
        self.app.push_screen(DiffScreen(title, diffs, can_apply=can_apply), answer)

    @work(thread=True, exclusive=True, group="profiles-switch")
    def _apply(self, plan: Any) -> None:
        from eloledger.profiles.switch import apply_switch

        try:
            written = apply_switch(plan, reason="tui switch")
        except Exception as exc:
            self.app.call_from_thread(
                self.notify,
                error_text(exc),
                title="Nothing was changed",
                severity="error",
                timeout=15,
            )
            return
        self.last_applied = written
        message = f"Switched to {plan.profile.name}: wrote {plural(len(written), 'file')}; backup made."
        self.app.call_from_thread(self.notify, message, timeout=6)
        self.app.call_from_thread(self.action_reload)

    def action_backups(self) -> None:
        self._list_backups()

    @work(thread=True, exclusive=True, group="profiles-switch")
    def _list_backups(self) -> None:
        from eloledger.profiles.switch import list_backups

        try:
            backups = list_backups()
        except Exception as exc:
            self.app.call_from_thread(self.notify, error_text(exc), severity="error")
            return

        def picked(backup_id: str | None) -> None:
            if backup_id:
                self._confirm_restore(backup_id)

        self.app.call_from_thread(self.app.push_screen, BackupsScreen(backups), picked)

    def _confirm_restore(self, backup_id: str) -> None:
        from eloledger.tui.dialogs import ConfirmScreen

        def answer(yes: bool | None) -> None:
            if yes:
                self._restore(backup_id)

        self.app.push_screen(
            ConfirmScreen(
                f"Restore every file of backup {backup_id}? The current files are "
                "backed up first, so this can be undone."
            ),
            answer,
        )

    @work(thread=True, exclusive=True, group="profiles-switch")
    def _restore(self, backup_id: str) -> None:
        from eloledger.profiles.switch import restore

        try:
            written = restore(None, backup_id)
        except Exception as exc:
            self.app.call_from_thread(
                self.notify, error_text(exc), title="Not restored", severity="error", timeout=12
            )
            return
        self.app.call_from_thread(self.notify, f"Restored {plural(len(written), 'file')} from {backup_id}")
        self.app.call_from_thread(self.action_reload)

    def commands(self) -> Iterable[SystemCommand]:
        def go(action: str):
            def run() -> None:
                self.post_message(ShowTab("profiles", action))

            return run

        yield SystemCommand("Profiles: new profile", "n: add a gateway profile", go("new"))
        yield SystemCommand("Profiles: edit the selected profile", "e", go("edit"))
        yield SystemCommand(
            "Profiles: use (switch clients to) the selected profile",
            "u: diff first, then all or nothing",
            go("use"),
        )
        yield SystemCommand("Profiles: backups and restore", "b", go("backups"))
