"""A warning on stderr, one way for every command.

What a warning says often comes from a file: an arm's or a task's name in a ledger, a
profile's field. Printed raw, an escape sequence in such a name reaches the terminal, which
can retitle itself, clear the screen or write the clipboard (OSC 52); so the text is made
visible first (:func:`eloledger.textsafe.visible`). On a terminal it wraps between words at
its width, under its first line; piped, each warning stays one line for grep.
"""

from __future__ import annotations

import sys

PREFIX = "eloledger: warning: "


def warn(message: object) -> None:
    """Print ``message`` as one warning on stderr."""
    from eloledger.tables import fill, terminal_width
    from eloledger.textsafe import visible

    text = PREFIX + visible(str(message))
    print(fill(text, terminal_width(sys.stderr), hang="  "), file=sys.stderr)  # (piped: one line)
