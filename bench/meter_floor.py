"""The least a Python proxy can do on the meter's path: a byte pipe, for ``bench_meter.py --floor``.

Each client connection gets one connection to the gateway, and bytes are copied both ways in
the event loop's read callbacks: no HTTP parsing, no credentials swapped, no usage read, no
row. What the meter costs beyond this is what metering costs; what this costs is what any
Python process in the middle pays for its wake-ups and system calls on this machine.

    python bench/meter_floor.py PORT GATEWAY_PORT      # until killed
"""

from __future__ import annotations

import asyncio
import sys


class _Pipe(asyncio.Protocol):
    """One side of a connection pair: what it reads is written to its peer."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Pipe | None = None
        self.early: list[bytes] = []  # read before the peer was connected

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.write(data)
        else:
            self.early.append(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()


async def main(port: int, gateway_port: int) -> None:
    loop = asyncio.get_running_loop()
    connecting: set[asyncio.Task[None]] = set()

    def client_side() -> _Pipe:
        client = _Pipe()

        async def connect() -> None:
            _, gateway = await loop.create_connection(_Pipe, "127.0.0.1", gateway_port)
            gateway.peer, client.peer = client, gateway
            for data in client.early:
                gateway.transport.write(data)  # type: ignore[union-attr]
            client.early.clear()

        task = loop.create_task(connect())
        connecting.add(task)
        task.add_done_callback(connecting.discard)
        return client

    server = await loop.create_server(client_side, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
