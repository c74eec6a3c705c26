"""The real app on a pseudo-terminal, driven like a user's terminal: keys in, bytes out.

For what Pilot cannot see: the bytes a terminal (or an SSH link) receives while the app is
idle, and how the process ends on a key, a signal or a closed terminal.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

CLI = [sys.executable, "-m", "eloledger"]


class AppOnPty:
    """``eloledger ARGS`` on a ``cols``×``rows`` pty; ``read`` drains what it wrote."""

    def __init__(
        self,
        args: list[str],
        *,
        cols: int = 80,
        rows: int = 24,
        env: dict[str, str] | None = None,
        unset: tuple[str, ...] = (),
    ) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        dropped = ("COLUMNS", "LINES", *unset)
        environ = {k: v for k, v in os.environ.items() if k not in dropped}
        environ |= {"TERM": "xterm-256color"} | (env or {})
        self.proc = subprocess.Popen(
            [*CLI, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=environ,
            close_fds=True,
            start_new_session=True,  # the pty becomes its controlling terminal (SIGHUP on close)
        )
        os.close(slave)
        self.closed = False

    def read(self, seconds: float) -> bytes:
        """Every byte written in the next ``seconds`` (less if the terminal closes)."""
        out = bytearray()
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the app closed the terminal
                break
            if not data:
                break
            out += data
        return bytes(out)

    def read_until(self, needle: bytes, seconds: float = 30.0) -> bytes:
        """Read until ``needle`` was written (or ``seconds`` pass); all bytes read."""
        out = bytearray()
        end = time.monotonic() + seconds
        while needle not in out and time.monotonic() < end:
            out += self.read(0.2)
        return bytes(out)

    def settle(self, quiet: float = 1.5, seconds: float = 15.0) -> bytes:
        """Read until nothing was written for ``quiet`` seconds (startup, a background fit
        and its focus change are over); all bytes read."""
        out = bytearray()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            chunk = self.read(quiet)
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def close_terminal(self) -> None:
        """The terminal goes away (an SSH link drops): the app gets SIGHUP and EOF."""
        if not self.closed:
            os.close(self.master)
            self.closed = True

    def exited_within(self, seconds: float) -> int | None:
        """The exit status if the app ended within ``seconds`` (reading meanwhile), else None."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            status = self.proc.poll()
            if status is not None:
                return status
            if self.closed:
                time.sleep(0.1)
            else:
                self.read(0.1)
        return self.proc.poll()

    def stop(self) -> None:
        """Kill what is left (a failed test must not leave the app running)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.close_terminal()
