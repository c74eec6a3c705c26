"""The backup sets of the client files, newest first; picking one asks for a restore."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


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
