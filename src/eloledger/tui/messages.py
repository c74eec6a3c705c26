"""Messages a tab posts up to the app (tabs never call the app's methods or import it)."""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message


class ShowTab(Message):
    """Bring tab ``tab`` to the front, then call ``then`` (e.g. the tab's action for a command
    chosen in the palette, which must run once the tab is shown)."""

    def __init__(self, tab: str, then: Callable[[], object] | None = None) -> None:
        super().__init__()
        self.tab = tab
        self.then = then
