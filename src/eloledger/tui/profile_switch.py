"""The dialog that picks which clients (and which Claude Code scope) a switch writes."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Label, Select, Static

from eloledger.tui.dialogs import EnterSubmits
from eloledger.tui.profile_detail import CLIENT_LABELS


class TextCheckbox(Checkbox):
    """A checkbox whose state reads as text: ``X`` ticked, blank not. Textual draws ``X`` in
    both states and tells them apart by colour only, which NO_COLOR takes away."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 (Textual's class attribute, per value here)
        return "X" if self.value else " "


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
                yield TextCheckbox(
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
