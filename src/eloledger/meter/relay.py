"""Inside an agent's sandbox: the only way out, a TCP port on its own 127.0.0.1 to the meter.

The sandbox has no network but its own loopback (bubblewrap's network namespace), so the
host's 127.0.0.1 services, its abstract unix sockets and other sessions are out of reach. The
meter's unix socket for this session is bound into the sandbox; this relay listens on
``127.0.0.1:PORT`` and copies bytes both ways to that socket, so a CLI given
``http://127.0.0.1:PORT`` as its base URL reaches the meter and nothing else.

Runs as ``python -I -S relay.py SOCKET PORT -- ARGV...`` (standard library only: eloledger
is not importable in the sandbox): it binds the port, starts ARGV (the CLI) as its child,
serves until the child exits and exits with the child's status. It writes nothing to stdout
or stderr (they are the CLI's).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    """Copy one direction until it ends (blocking calls: a thread each, no event loop, so a
    streamed answer costs two system calls per chunk here and nothing more)."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _connection(client: socket.socket, path: str) -> None:
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as meter:
        try:
            meter.connect(path)
        except OSError:
            return
        back = threading.Thread(target=_pipe, args=(meter, client), daemon=True)
        back.start()
        _pipe(client, meter)
        back.join()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_connection, args=(client, path), daemon=True).start()


def main() -> None:
    path, port = sys.argv[1], int(sys.argv[2])
    argv = sys.argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    child = os.fork()
    if child == 0:
        listener.close()
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"cannot start {argv[0]}: {exc}\n".encode())
            os._exit(127)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    _, status = os.waitpid(child, 0)
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
