"""The Elo tab's open dialog: a comparisons file and, optionally, its ledger."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class OpenScreen(ModalScreen[tuple[Path, Path | None] | None]):
    """Ask for a comparisons file and (optionally) its ledger."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Back")]
    DEFAULT_CSS = """
    OpenScreen { align: center middle; }
    OpenScreen > Vertical { width: 80; max-width: 100%; height: auto; border: thick $primary;
                            background: $surface; padding: 1 2; }
    OpenScreen #open-error { color: $error; height: auto; }
    OpenScreen Horizontal { height: auto; align-horizontal: right; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Comparisons file (CSV/JSONL: task_id,winner,loser or task_id,a,b,outcome)")
            yield Input(placeholder="run.comparisons.csv", id="open-comparisons")
            yield Label("Ledger (optional: adds the token columns)")
            yield Input(placeholder="run.ledger.jsonl", id="open-ledger")
            yield Static("", id="open-error")
            with Horizontal():
                yield Button("Open (enter)", id="open-ok", variant="primary")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "open-comparisons":
            self.query_one("#open-ledger", Input).focus()
        else:
            self._finish()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._finish()

    def _finish(self) -> None:
        comps = self.query_one("#open-comparisons", Input).value.strip()
        ledger = self.query_one("#open-ledger", Input).value.strip()
        error = self.query_one("#open-error", Static)
        if not comps or not Path(comps).expanduser().is_file():
            error.update(f"{comps or '(empty)'}: no such file")
            return
        if ledger and not Path(ledger).expanduser().is_file():
            error.update(f"{ledger}: no such file")
            return
        self.dismiss((Path(comps).expanduser(), Path(ledger).expanduser() if ledger else None))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
