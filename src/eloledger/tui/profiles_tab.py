"""The Profiles tab: profiles and presets, add/edit with as-you-type URL checks, switch with a
diff first (all or nothing), backups and restore, and what each client will actually use.

Everything goes through the core the CLI uses: ``profiles.store`` (load/save), ``doctor.urls``
(the checks as you type), ``profiles.switch`` (plan -> diff -> apply; restore),
``doctor.effective`` (value + source per client). File work runs in thread workers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    OptionList,
    Select,
    Static,
)
from textual.widgets.option_list import Option

from eloledger.redact import mask_url
from eloledger.tui.dialogs import EnterSubmits

CLIENT_LABELS = {
    "claude": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "openai": "OpenAI SDK",
    "anthropic": "Anthropic SDK",
}


def url_findings(url: str) -> list[Any]:
    """The doctor's checks for a profile's gateway root (what the form shows as you type)."""
    from eloledger.doctor.urls import check_root

    return check_root(url, target="profile", evidence=f"base URL {url!r}") if url else []


def profile_summary(profile: Any, *, preset: bool) -> str:
    """Markup: the profile and the URL each client will be given."""
    key = f"${profile.key_env}" if profile.key_env else ""
    if profile.key_in_secrets:
        key = "secrets file (0600)"
    lines = [
        f"[b]{escape(profile.name)}[/b]"
        + ("  [$text-muted](built-in preset)[/]" if preset else ""),
        escape(profile.description) if profile.description else "",
        f"root      {escape(mask_url(profile.base_url))}",
        f"key       {escape(key) or '[$warning]none set[/]'} · auth {profile.auth}",
        f"model     {escape(profile.model or '-')} · runner speaks {profile.wire_api}",
        "",
        "[b]URL each client gets[/b]",
    ]
    for client in ("claude", "codex", "gemini", "openai", "anthropic"):
        if profile.serves(client):
            url = mask_url(profile.client_base_url(client))
            lines.append(f"  {CLIENT_LABELS[client]:<14} {escape(url)}")
        else:
            lines.append(f"  {CLIENT_LABELS[client]:<14} [$text-muted]not served[/]")
    return "\n".join(line for line in lines if line is not None)


def effective_text(settings: dict[str, list[Any]]) -> str:
    """Markup: per client, the value it will use, where it comes from, what it shadows."""
    lines = ["[b]What each client uses now[/b] (value ← source)"]
    for client, items in settings.items():
        label = CLIENT_LABELS.get(client.split("@")[0], client)
        if "@" in client:
            label += f" ({client.split('@', 1)[1]})"
        lines.append(f"[b $accent]{escape(label)}[/]")
        if not items:
            lines.append("  [$text-muted]nothing set (the client's defaults)[/]")
        for s in items:
            value = s.value if s.value is not None else "(unset)"
            lines.append(f"  {escape(s.name)} = {escape(str(value))}")
            lines.append(f"      [$text-muted]← {escape(str(s.source))}[/]")
            for shadow in s.shadowed:
                lines.append(f"      [$warning]shadows {escape(str(shadow))}[/]")
    return "\n".join(lines)


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


class ProfileForm(ModalScreen[Any]):
    """Add or edit a profile; the URL is checked by the doctor on every keystroke."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
        Binding("ctrl+s", "save", "Save"),
    ]
    DEFAULT_CSS = """
    ProfileForm { align: center top; }  /* top: the form does not jump as checks appear */
    ProfileForm > VerticalScroll { width: 84; max-width: 100%; height: auto; max-height: 100%;
                                   border: thick $primary; background: $surface; padding: 0 1; }
    ProfileForm Input, ProfileForm Input:focus { height: 1; border: none; padding: 0 1;
                                                 background: $boost; }
    ProfileForm Input:focus { background: $primary 30%; }
    ProfileForm Label { color: $text-muted; }
    ProfileForm Select { margin-bottom: 0; }
    ProfileForm #form-url-check { height: auto; min-height: 1; }
    ProfileForm #form-error { color: $error; height: auto; }
    ProfileForm Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ProfileForm Button { margin-left: 2; }
    """

    def __init__(self, profile: Any | None = None) -> None:
        super().__init__()
        self.profile = profile

    def compose(self) -> ComposeResult:
        from eloledger.profiles.model import AUTH_FORMS, WIRE_APIS

        p = self.profile
        with VerticalScroll():
            yield Label("Name")
            yield Input(
                value=p.name if p else "",
                id="form-name",
                select_on_focus=False,
                placeholder="my-gateway",
                disabled=p is not None,
            )
            yield Label("Gateway root URL (each client's URL is derived from it)")
            yield Input(
                value=p.base_url if p else "",
                id="form-url",
                select_on_focus=False,
                placeholder="https://gateway.example.com",
            )
            yield Static("", id="form-url-check")
            yield Label("Name of the environment variable holding the key")
            yield Input(
                value=(p.key_env or "") if p else "",
                id="form-key-env",
                select_on_focus=False,
                placeholder="MY_GATEWAY_KEY",
            )
            yield Label("Anthropic-side header form")
            yield Select(
                [(a, a) for a in AUTH_FORMS],
                value=p.auth if p else "bearer",
                allow_blank=False,
                id="form-auth",
                compact=True,
            )
            yield Label("Default model (optional)")
            yield Input(value=(p.model or "") if p else "", id="form-model", select_on_focus=False)
            yield Label("Wire protocol the runner speaks")
            yield Select(
                [(w, w) for w in WIRE_APIS],
                value=p.wire_api if p else "openai-chat",
                allow_blank=False,
                id="form-wire",
                compact=True,
            )
            yield Static("", id="form-error")
            with Horizontal():
                yield Button("Cancel (esc)", id="form-cancel", compact=True)
                yield Button("Save (ctrl+s)", id="form-save", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#form-url" if self.profile else "#form-name", Input).focus()
        self._check_url(self.query_one("#form-url", Input).value)

    @on(Input.Changed, "#form-url")
    def _url_changed(self, event: Input.Changed) -> None:
        self._check_url(event.value)

    def _check_url(self, url: str) -> None:
        box = self.query_one("#form-url-check", Static)
        if not url.strip():
            box.update("[$text-muted]type the URL: it is checked as you type[/]")
            return
        findings = url_findings(url)
        if not findings:
            box.update("[$success]✓ URL looks right[/]")
            return
        colour = {"error": "$error", "warning": "$warning"}
        box.update(
            "\n".join(
                f"[{colour.get(f.severity, '$text-muted')}]{f.severity}: {escape(f.message)}[/]"
                + (f" — {escape(f.fix)}" if f.fix else "")
                for f in findings
            )
        )

    @on(Button.Pressed, "#form-save")
    def action_save(self) -> None:
        from eloledger.errors import UserError
        from eloledger.profiles.model import Profile

        name = self.query_one("#form-name", Input).value.strip()
        fields = {
            "base_url": self.query_one("#form-url", Input).value.strip(),
            "key_env": self.query_one("#form-key-env", Input).value.strip() or None,
            "auth": self.query_one("#form-auth", Select).value,
            "model": self.query_one("#form-model", Input).value.strip() or None,
            "wire_api": self.query_one("#form-wire", Select).value,
        }
        if self.profile is not None:
            import dataclasses

            profile = dataclasses.replace(self.profile, **fields)
        else:
            profile = Profile(name=name, **fields)
        errors = [f for f in url_findings(fields["base_url"]) if f.severity == "error"]
        try:
            if errors:
                raise UserError(f"base URL: {errors[0].message}", fix=errors[0].fix)
            profile.validate()
        except UserError as exc:
            self.query_one("#form-error", Static).update(escape(exc.one_line()))
            return
        self.dismiss(profile)

    @on(Button.Pressed, "#form-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class SwitchScreen(EnterSubmits, ModalScreen[tuple[list[str], str] | None]):
    """Pick the targets (and Claude Code scope) to switch; space ticks, enter shows the diff."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
        EnterSubmits.ENTER,
    ]
    DEFAULT_CSS = """
    SwitchScreen { align: center middle; }
    SwitchScreen > Vertical { width: 64; max-width: 100%; height: auto; max-height: 100%;
                              border: thick $primary; background: $surface; padding: 0 1; }
    SwitchScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    SwitchScreen Label { margin-top: 1; }
    SwitchScreen #switch-error { color: $error; height: auto; }
    """

    def __init__(self, profile: Any) -> None:
        super().__init__()
        self.profile = profile

    def compose(self) -> ComposeResult:
        from eloledger.profiles.writers import SCOPES, TARGETS

        with Vertical():
            yield Label(f"Switch to [b]{escape(self.profile.name)}[/b]: which clients?")
            for target in TARGETS:
                serves = target == "shell" or self.profile.serves(target)
                yield Checkbox(
                    CLIENT_LABELS.get(target, 'Shell (eval "$(eloledger env)")'),
                    value=serves and target != "shell",
                    id=f"switch-{target}",
                    disabled=not serves,
                    compact=True,
                )
            yield Label("Claude Code scope")
            yield Select(
                [(s, s) for s in SCOPES],
                value="user",
                allow_blank=False,
                id="switch-scope",
                compact=True,
            )
            yield Static("", id="switch-error")
            with Horizontal():
                yield Button(
                    "Show the diff (enter)", id="switch-ok", variant="primary", compact=True
                )

    def on_mount(self) -> None:
        self.query_one(Checkbox).focus()

    @on(Button.Pressed, "#switch-ok")
    def action_submit(self) -> None:
        from eloledger.profiles.writers import TARGETS

        chosen = [t for t in TARGETS if self.query_one(f"#switch-{t}", Checkbox).value]
        if not chosen:
            self.query_one("#switch-error", Static).update("tick at least one client")
            return
        self.dismiss((chosen, str(self.query_one("#switch-scope", Select).value)))

    def action_cancel(self) -> None:
        self.dismiss(None)


class BackupsScreen(ModalScreen[str | None]):
    """Backup sets, newest first; enter restores the highlighted one (after a confirm)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back")]
    DEFAULT_CSS = """
    BackupsScreen { align: center middle; }
    BackupsScreen > Vertical { width: 90%; height: 80%; border: thick $primary;
                               background: $surface; padding: 0 1; }
    BackupsScreen OptionList { height: 1fr; }
    BackupsScreen #backups-help { height: auto; }
    """

    def __init__(self, backups: list[Any]) -> None:
        super().__init__()
        self.backups = backups

    def compose(self) -> ComposeResult:
        import time

        with Vertical():
            yield Static(
                "Backups, newest first. [b]enter[/b] restores every file of the highlighted set "
                "(the current files are backed up first) · [b]escape[/b] back",
                id="backups-help",
            )
            options = []
            for b in reversed(self.backups):
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(b.created))
                files = ", ".join(f.path for f in b.files)
                options.append(Option(f"{when}  {b.reason} → {b.profile}  ({files})", id=b.id))
            if not options:
                options.append(Option("no backups yet: a switch makes one first", disabled=True))
            yield OptionList(*options, id="backups-list")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


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
        yield OptionList(id="profile-list")
        with VerticalScroll(id="profile-detail"):
            yield Static("Loading profiles …", id="profile-summary")
            yield Static("", id="profile-effective")

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
            from eloledger.tui.app import _message

            error = _message(exc)
        active = active_targets()
        try:
            from eloledger.doctor.effective import effective_settings

            effective = effective_settings()
        except Exception as exc:
            from eloledger.tui.app import _message

            error = error or _message(exc)
        self.active = active
        self.app.call_from_thread(self._loaded, profiles, presets, effective, error)

    def _loaded(self, profiles: dict, presets: dict, effective: dict, error: str) -> None:
        self.profiles, self.presets, self.effective = profiles, presets, effective
        option_list = self.query_one("#profile-list", OptionList)
        highlighted = self._select_after or self.selected_name()
        self._select_after = None
        option_list.clear_options()
        for name in sorted(profiles):
            option_list.add_option(Option(self._label(name, ""), id=f"p:{name}"))
        for name in sorted(presets):
            if name not in profiles:
                option_list.add_option(
                    Option(self._label(name, " [dim](preset)[/]"), id=f"p:{name}")
                )
        if option_list.option_count:
            ids = [option_list.get_option_at_index(i).id for i in range(option_list.option_count)]
            wanted = f"p:{highlighted}" if highlighted else None
            option_list.highlighted = ids.index(wanted) if wanted in ids else 0
        self.query_one("#profile-effective", Static).update(effective_text(effective))
        self._show_selected()
        if error:
            self.query_one("#profile-summary", Static).update(f"[$error]{escape(error)}[/]")

    def _label(self, name: str, suffix: str) -> str:
        """● marks the profile clients were last switched to (and restores undo it)."""
        if name in self.active:
            return f"[b $success]●[/] {escape(name)}{suffix}"
        return f"  {escape(name)}{suffix}"

    def selected_name(self) -> str | None:
        option_list = self.query_one("#profile-list", OptionList)
        if option_list.highlighted is None or not option_list.option_count:
            return None
        option = option_list.get_option_at_index(option_list.highlighted)
        return option.id[2:] if option.id else None

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
        summary = self.query_one("#profile-summary", Static)
        if profile is None:
            summary.update("No profiles yet: press [b]n[/b] to add one.")
            return
        preset = profile.name not in self.profiles
        text = profile_summary(profile, preset=preset)
        where = self.active.get(profile.name)
        if where:
            text += f"\n\n[$success]● active for: {escape(', '.join(where))}[/]"
        summary.update(text)

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
            from eloledger.tui.app import _message

            self.notify(_message(exc), title="Not saved", severity="error", timeout=10)
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
                # appears as a placeholder and nothing can be applied (issue 11 item 5).
                plan = plan_switch(profile, targets, scope, key=placeholder)
                preview = (
                    f"preview only: ${profile.key_env} is not set, so the key is shown as "
                    f"{placeholder}; export it (or store the key) to apply"
                )
        except Exception as exc:
            from eloledger.tui.app import _message

            self.app.call_from_thread(
                self.notify, _message(exc), title="Cannot switch", severity="error", timeout=12
            )
            return
        self.app.call_from_thread(self._confirm_plan, plan, preview)

    def _confirm_plan(self, plan: Any, preview: str = "") -> None:
        from eloledger.tui.dialogs import DiffScreen

        diffs = [(str(f.path), f.diff) for f in plan.files if f.changed]
        title = f"Switch to {plan.profile.name}: {len(diffs)} file(s) change (secrets masked)"
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
            from eloledger.tui.app import _message

            self.app.call_from_thread(
                self.notify,
                _message(exc),
                title="Nothing was changed",
                severity="error",
                timeout=15,
            )
            return
        self.last_applied = written
        message = f"Switched to {plan.profile.name}: wrote {len(written)} file(s); backup made."
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
            from eloledger.tui.app import _message

            self.app.call_from_thread(self.notify, _message(exc), severity="error")
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
            from eloledger.tui.app import _message

            self.app.call_from_thread(
                self.notify, _message(exc), title="Not restored", severity="error", timeout=12
            )
            return
        self.app.call_from_thread(self.notify, f"Restored {len(written)} file(s) from {backup_id}")
        self.app.call_from_thread(self.action_reload)

    def commands(self) -> Iterable[SystemCommand]:
        def go(action: str):
            def run() -> None:
                self.app.action_show_tab("profiles")
                self.run_action(action)

            return run

        yield SystemCommand("Profiles: new profile", "n: add a gateway profile", go("new"))
        yield SystemCommand("Profiles: edit the selected profile", "e", go("edit"))
        yield SystemCommand(
            "Profiles: use (switch clients to) the selected profile",
            "u: diff first, then all or nothing",
            go("use"),
        )
        yield SystemCommand("Profiles: backups and restore", "b", go("backups"))
