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

import asyncio
import contextlib
import os
import signal
import socket
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()


async def _serve(listener: socket.socket, path: str, child: int) -> int:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_server(connection, sock=listener)
    loop = asyncio.get_running_loop()
    _, status = await loop.run_in_executor(None, os.waitpid, child, 0)
    server.close()
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main() -> None:
    path, port = sys.argv[1], int(sys.argv[2])
    argv = sys.argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    listener.setblocking(False)
    child = os.fork()
    if child == 0:
        listener.close()
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"cannot start {argv[0]}: {exc}\n".encode())
            os._exit(127)
    code = asyncio.run(_serve(listener, path, child))
    os._exit(code)


if __name__ == "__main__":
    main()
