"""How the TUI words an exception in a notification: one line, secrets scrubbed.

A module of its own so that tabs and dialogs need not import the app for it (an import of the
app from a tab is a cycle).
"""

from __future__ import annotations


def error_text(exc: BaseException) -> str:
    """A ``UserError``'s one line (message and fix), else ``Type: message``; secrets masked."""
    from eloledger.redact import scrub

    one_line = getattr(exc, "one_line", None)
    return scrub(one_line() if callable(one_line) else f"{type(exc).__name__}: {exc}")
