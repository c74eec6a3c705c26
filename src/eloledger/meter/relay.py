"""Inside an agent's sandbox: make ``127.0.0.1:PORT`` the meter, then become the CLI.

The sandbox has no network but its own loopback (bubblewrap's network namespace), so the
host's 127.0.0.1 services, its abstract unix sockets and other sessions are out of reach. The
meter's unix socket for this session is bound into the sandbox. This program binds
``127.0.0.1:PORT`` in the sandbox's namespace, hands the listening socket to the meter over
that unix socket (``SCM_RIGHTS``; :mod:`.door`), closes its own copy and execs the CLI. The
meter then accepts the CLI's connections itself: no process in the sandbox copies a byte of a
call (a copying relay here cost a third of the meter's CPU per call).

Runs as ``python -I -S relay.py SOCKET PORT -- ARGV...`` (standard library only: eloledger
is not importable in the sandbox). Writes nothing to stdout (it becomes the CLI's); if the
meter does not take the port it says so on stderr and exits 127, as a shell does for a command
it cannot start.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import NoReturn

TAKEN = b"1"  # :data:`eloledger.meter.door.TAKEN`


def _fail(message: str) -> NoReturn:
    os.write(2, f"eloledger: {message}\n".encode())
    os._exit(127)


def main() -> None:
    path, port = sys.argv[1], int(sys.argv[2])
    argv = sys.argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as meter:
            meter.settimeout(30)
            meter.connect(path)
            socket.send_fds(meter, [b"P"], [listener.fileno()])
            answer = meter.recv(1)
    except OSError as exc:
        _fail(f"the meter could not be reached from the sandbox: {exc}")
    listener.close()  # the meter holds it now; nothing the CLI starts can accept on it
    if answer != TAKEN:
        _fail("the meter did not take the sandbox's port")
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it; the CLI must not
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        _fail(f"cannot start {argv[0]}: {exc}")


if __name__ == "__main__":
    main()
