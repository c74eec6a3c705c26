"""One exception type for user mistakes, so every face can turn it into a one-line message."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input (file, line, field) and how to fix it.

    The CLI prints it as one line and exits with status 2; the TUI shows it in a notification.
    Never raise it for a bug in eloledger itself.
    """

    exit_status = 2

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message = message
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = self.message if not self.fix else f"{self.message} (fix: {self.fix})"
        return " ".join(text.split())
