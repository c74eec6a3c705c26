"""The app ends when whoever started it goes: SIGTERM, SIGHUP, or its terminal/pipe closing.

Why: an app left behind is a process that renders to nobody. Textual's input thread spins on
an input that reached end-of-file (a closed SSH terminal, a served app whose browser or
server went: its stdin is a pipe) instead of ending the app, and such viewers were found
still rendering at 13–19% of a core 25 minutes later. So the app asks, once a second,
whether its input hung up (``poll`` reports POLLHUP without reading a byte), and treats
SIGTERM and SIGHUP as "quit" (the terminal is restored, the ledger untouched: a viewer only
reads).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import sys
import threading
from typing import Any

CHECK_S = 1.0
HARD_EXIT_S = 10.0  # a run cancelled by the exit gets this long to stop its calls
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def input_gone(fd: int) -> bool:
    """Whether ``fd`` (the app's input) hung up or closed; never reads from it."""
    poller = select.poll()
    try:
        poller.register(fd, select.POLLIN)
    except (ValueError, OSError):
        return True
    return any(mask & _GONE for _, mask in poller.poll(0))


def end_with_input(app: Any, stdin: Any = None) -> None:
    """Make ``app`` (mounted, in its event loop) exit on SIGTERM/SIGHUP and on input EOF."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, _ending, app, sig)
    stream = stdin if stdin is not None else sys.__stdin__
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # no input at all: signals still end the app

    def check() -> None:
        if input_gone(fd):
            _ending(app, signal.SIGHUP)

    app.set_interval(CHECK_S, check, name="input-gone")


def _ending(app: Any, sig: signal.Signals) -> None:
    """Exit cleanly; if that has not ended the process within HARD_EXIT_S (an output nobody
    reads any more can block the last write forever), end it anyway. Once per app."""
    if getattr(app, "ending", False):
        return
    app.ending = True
    app.exit()
    timer = threading.Timer(HARD_EXIT_S, os._exit, args=(128 + int(sig),))
    timer.daemon = True  # a clean exit in time ends the process, timer and all
    timer.start()
