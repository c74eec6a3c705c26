"""The left-hand list of the Profiles tab: stored profiles, then the presets not shadowed by one.

Attributes down: the tab hands it the profiles, presets and active targets (``show``); messages
up: Textual's own ``OptionList.OptionHighlighted`` when the user moves.
"""

from __future__ import annotations

from typing import Any

from textual.markup import escape
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class ProfileList(OptionList):
    """One line per profile; ● marks one the clients are switched to (restores undo it)."""

    def show(
        self,
        profiles: dict[str, Any],
        presets: dict[str, Any],
        active: dict[str, list[str]],
        highlight: str | None,
    ) -> None:
        """Fill the list and highlight ``highlight`` (else the first line)."""
        self.clear_options()
        for name in sorted(profiles):
            self.add_option(Option(self._label(name, "", active), id=f"p:{name}"))
        for name in sorted(presets):
            if name not in profiles:
                label = self._label(name, " [dim](preset)[/]", active)
                self.add_option(Option(label, id=f"p:{name}"))
        if self.option_count:
            ids = [self.get_option_at_index(i).id for i in range(self.option_count)]
            wanted = f"p:{highlight}" if highlight else None
            self.highlighted = ids.index(wanted) if wanted in ids else 0

    @staticmethod
    def _label(name: str, suffix: str, active: dict[str, list[str]]) -> str:
        if name in active:
            return f"[b $success]●[/] {escape(name)}{suffix}"
        return f"  {escape(name)}{suffix}"

    def selected_name(self) -> str | None:
        """The highlighted profile's name (None on an empty list)."""
        if self.highlighted is None or not self.option_count:
            return None
        option = self.get_option_at_index(self.highlighted)
        return option.id[2:] if option.id else None
