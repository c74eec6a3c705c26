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


class CodedWarning(str):
    """A warning's text with a stable code, as the doctor's findings have.

    It is a ``str`` (printed, written to JSON and compared as before), and faces that react to
    a kind of warning match its ``code``, never its words, which may be reworded.
    """

    code: str

    def __new__(cls, code: str, text: str) -> CodedWarning:
        made = super().__new__(cls, text)
        made.code = code
        return made

    def __getnewargs__(self) -> tuple[str, str]:  # pickled across worker processes intact
        return (self.code, str(self))


def warning_code(text: str) -> str:
    """The code of a :class:`CodedWarning`, or "" for a plain string."""
    return getattr(text, "code", "")
