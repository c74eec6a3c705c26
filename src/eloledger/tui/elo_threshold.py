"""The Elo tab's threshold dialog: the "worth it" marginal Elo per 1K tokens per task."""

from __future__ import annotations

import math
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ThresholdScreen(ModalScreen[float | None]):
    """Ask for the "worth it" marginal Elo per 1K threshold."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Back")]
    DEFAULT_CSS = """
    ThresholdScreen { align: center middle; }
    ThresholdScreen > Vertical { width: 64; max-width: 100%; height: auto;
                                 border: thick $primary; background: $surface; padding: 1 2; }
    ThresholdScreen #threshold-help { height: auto; }
    ThresholdScreen #threshold-error { color: $error; height: auto; }
    """

    def __init__(self, current: float) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "An arm is worth its extra tokens from how many Elo per 1K tokens per task "
                "(marginal)? [b]enter[/b] sets it · [b]escape[/b] back",
                id="threshold-help",
            )
            yield Input(value=f"{self.current:g}", id="threshold-input", compact=True)
            yield Static("", id="threshold-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            value = float(event.value)
            if not math.isfinite(value) or value < 0:
                raise ValueError
        except ValueError:
            self.query_one("#threshold-error", Static).update("give a number ≥ 0, e.g. 50")
            return
        self.dismiss(value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
