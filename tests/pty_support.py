"""Run the real CLI on a pseudo-terminal (what a user's terminal would receive), for tests."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios

CLI = [sys.executable, "-m", "eloledger"]


def run_on_pty(
    args: list[str],
    *,
    cols: int = 80,
    rows: int = 24,
    env: dict[str, str] | None = None,
    stderr: bool = False,
) -> tuple[int, str]:
    """Exit status and every byte the command wrote to a ``cols``-wide terminal (stdout, and
    stderr too with ``stderr``), decoded, with the pty's CRLF turned back into LF."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (env or {})
    proc = subprocess.Popen(
        [*CLI, *args],
        stdout=slave,
        stderr=slave if stderr else subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=environ,
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError(f"{args}: no output for 120 s")
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    status = proc.wait(timeout=60)
    return status, b"".join(chunks).decode().replace("\r\n", "\n")
