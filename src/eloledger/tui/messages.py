"""Messages a tab posts up to the app (tabs never call the app's methods or import it)."""

from __future__ import annotations

from textual.message import Message


class ShowTab(Message):
    """Bring tab ``tab`` to the front, then run ``action`` (one of that tab's own actions,
    e.g. "new") on the tab's widget: a palette command, or the Doctor's "add a profile (n)"."""

    def __init__(self, tab: str, action: str | None = None) -> None:
        super().__init__()
        self.tab = tab
        self.action = action
