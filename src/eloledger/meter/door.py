"""A session's unix socket: HTTP from inside its sandbox, or, once, the sandbox's own port.

Why the port is handed over: a CLI in the sandbox reaches the meter on ``127.0.0.1:PORT`` of
its own network namespace. A process in there that copied bytes between that port and this
socket cost a thread wakeup and two system calls per piece of every answer, on top of the
meter's own. Instead :mod:`.relay` binds the port inside the sandbox, sends the listening
socket itself here (``SCM_RIGHTS``) and steps aside (it execs the CLI): the meter accepts the
CLI's connections on that socket directly, so nothing in the sandbox touches a byte of a call.

The first connection to send a descriptor hands the port over; the descriptor must be a
listening TCP socket, and a session takes one only (anything later is refused and closed). A
connection that sends bytes without a descriptor is plain HTTP, served as before (tests and
tools use it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

Factory = Callable[[], asyncio.Protocol]  # a new protocol for each of the agent's connections
TAKEN = b"1"  # the meter's answer to a handover it took (the relay then execs the CLI)
_FIRST_READ = 1 << 16


class Door:
    """The listening unix socket of one session (``start``, ``close``)."""

    def __init__(self, path: Path, factory: Factory) -> None:
        self.path = path
        self.factory = factory
        self.port_server: asyncio.Server | None = None  # the sandbox's port, once handed over
        self.tasks: set[asyncio.Task[None]] = set()
        self._sock: socket.socket | None = None
        self._pending: set[socket.socket] = set()  # accepted, first bytes not yet read
        self._handed = False

    def start(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(self.path))
            os.chmod(self.path, 0o666)  # the sandbox's own uid connects; its folder is 0700
            sock.listen(64)
            sock.setblocking(False)
            asyncio.get_running_loop().add_reader(sock.fileno(), self._accept)
        except BaseException:
            sock.close()
            raise
        self._sock = sock

    def close(self) -> None:
        loop = asyncio.get_running_loop()
        for conn in [*self._pending, *([self._sock] if self._sock else [])]:
            loop.remove_reader(conn.fileno())
            conn.close()
        self._pending.clear()
        self._sock = None
        if self.port_server is not None:
            self.port_server.close()
            self.port_server = None
        self.path.unlink(missing_ok=True)

    def _accept(self) -> None:
        assert self._sock is not None
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors: try again on the next wakeup
                return
            conn.setblocking(False)
            self._pending.add(conn)
            loop.add_reader(conn.fileno(), self._first, conn)

    def _first(self, conn: socket.socket) -> None:
        """A connection's first bytes: a handed-over port, or the start of an HTTP request."""
        try:
            data, fds, _, _ = socket.recv_fds(conn, _FIRST_READ, 1)
        except (BlockingIOError, InterruptedError):
            return  # still readable later: the reader stays
        except OSError:
            data, fds = b"", []
        asyncio.get_running_loop().remove_reader(conn.fileno())
        self._pending.discard(conn)
        if fds:
            self._spawn(self._take_port(fds[0], conn))
        elif data:
            self._spawn(self._serve(conn, data))
        else:
            conn.close()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _serve(self, conn: socket.socket, first: bytes) -> None:
        loop = asyncio.get_running_loop()
        try:
            _, protocol = await loop.connect_accepted_socket(self.factory, sock=conn)
        except OSError:
            conn.close()
            return
        protocol.data_received(first)  # type: ignore[attr-defined]  # a stream protocol

    async def _take_port(self, fd: int, conn: socket.socket) -> None:
        with conn:
            try:
                listener = socket.socket(fileno=fd)
            except OSError:  # not a socket at all
                os.close(fd)
                return
            if self._handed or not _listening_tcp(listener):
                listener.close()
                return
            self._handed = True
            listener.setblocking(False)
            loop = asyncio.get_running_loop()
            self.port_server = await loop.create_server(self.factory, sock=listener)
            with contextlib.suppress(OSError):
                conn.send(TAKEN)


def _listening_tcp(sock: socket.socket) -> bool:
    try:
        listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    except OSError:
        return False
    return bool(listening) and sock.family in (socket.AF_INET, socket.AF_INET6) and (
        sock.type == socket.SOCK_STREAM
    )
