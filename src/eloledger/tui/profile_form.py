"""The add/edit profile dialog: the URL is checked by the doctor on every keystroke."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static


def url_findings(url: str) -> list[Any]:
    """The doctor's checks for a profile's gateway root (what the form shows as you type)."""
    from eloledger.doctor.urls import check_root

    return check_root(url, target="profile", evidence=f"base URL {url!r}") if url else []


class ProfileForm(ModalScreen[Any]):
    """Add or edit a profile; the URL is checked by the doctor on every keystroke."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
        Binding("ctrl+s", "save", "Save"),
        # Priority: the app moves the focus as it reads the key, before it hands on the keys
        # typed next. Unprioritised, tab waits in the field's queue behind them, and text
        # typed right after tab landed in the field being left.
        Binding("tab", "app.focus_next", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", show=False, priority=True),
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
