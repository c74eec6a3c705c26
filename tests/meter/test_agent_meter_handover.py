"""The sandbox's port handed to the meter, attacked and used; the gateway leg's unchunker.

The relay (meter/relay.py, run here on the host as it runs in a sandbox) binds a port, hands
the listening socket to the meter over the session's unix socket and execs its command: the
meter then answers on that port with no process copying bytes. A session takes one port
only, and only a listening TCP socket: whatever else arrives on its unix socket later (an
agent's own listening socket, a pipe) is refused and closed, and the agent gets no port of
its own served by the meter.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from eloledger.meter import RELAY, Meter, Upstream
from eloledger.meter.door import TAKEN
from eloledger.meter.upstream import Unchunk
from eloledger.sim import SimServer

REAL_KEY = "sk-real-gateway-key-" + "5e" * 10
BODY = {"model": "sim-small", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


def _sim() -> SimServer:
    return SimServer(speed=500.0, seed=3, api_keys={REAL_KEY})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _hand(path: str, fd: int) -> bytes:
    """Send ``fd`` over the session's unix socket as the relay does; the meter's answer."""

    def send() -> bytes:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10)
            conn.connect(path)
            socket.send_fds(conn, [b"P"], [fd])
            return conn.recv(1)

    return await asyncio.to_thread(send)


async def test_the_relay_hands_its_port_over_and_execs_its_command() -> None:
    meter = Meter(timeout_s=30)
    try:
        async with _sim() as sim:
            session = await meter.open(Upstream(sim.base_url, REAL_KEY))
            port = _free_port()
            relay = subprocess.Popen(
                [sys.executable, "-I", "-S", str(RELAY), str(session.socket_path), str(port), "--",
                 sys.executable, "-c", "import sys, time; print('cli', flush=True); time.sleep(30)"],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                line = await asyncio.to_thread(relay.stdout.readline)  # type: ignore[union-attr]
                assert line == "cli\n"  # the command runs as the relay's own process (exec)
                proc = Path(f"/proc/{relay.pid}")
                cmdline = (proc / "cmdline").read_bytes()
                assert b"relay.py" not in cmdline and b"time.sleep" in cmdline
                fds = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
                assert not any(f.startswith("socket:") for f in fds), fds  # no copy of the port kept
                async with httpx2.AsyncClient() as client:
                    answer = await client.post(f"http://127.0.0.1:{port}/v1/messages", json=BODY,
                                               headers={"x-api-key": session.token})  # fmt: skip
                    refused = await client.post(f"http://127.0.0.1:{port}/v1/messages", json=BODY,
                                                headers={"x-api-key": REAL_KEY})  # fmt: skip
            finally:
                relay.kill()
                relay.wait()
            assert answer.status_code == 200 and refused.status_code == 401
            assert len(session.calls) == 1 and session.calls[0].usage is not None
            assert session.refused == 1
    finally:
        await meter.aclose()


async def test_a_second_port_or_a_descriptor_that_is_no_listening_socket_is_refused() -> None:
    meter = Meter(timeout_s=30)
    listeners = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    read_end, write_end = os.pipe()
    try:
        async with _sim() as sim:
            session = await meter.open(Upstream(sim.base_url, REAL_KEY))
            path = str(session.socket_path)
            assert await _hand(path, read_end) == b""  # a pipe: closed, nothing taken
            connected = socket.create_connection(listeners[0].getsockname())
            assert await _hand(path, connected.fileno()) == b""  # a socket, but not listening
            connected.close()
            assert await _hand(path, listeners[0].fileno()) == TAKEN
            assert await _hand(path, listeners[1].fileno()) == b""  # one port per session
            ports = [s.getsockname()[1] for s in listeners]
            async with httpx2.AsyncClient(timeout=5) as client:
                ok = await client.post(f"http://127.0.0.1:{ports[0]}/v1/messages", json=BODY,
                                       headers={"x-api-key": session.token})  # fmt: skip
                assert ok.status_code == 200
                listeners[0].close()  # the meter holds its own copy: still served
                again = await client.post(f"http://127.0.0.1:{ports[0]}/v1/messages", json=BODY,
                                          headers={"x-api-key": session.token})  # fmt: skip
                assert again.status_code == 200
            # the refused port is never served: a connection waits in its backlog, unanswered
            probe = socket.create_connection(("127.0.0.1", ports[1]), timeout=2)
            probe.sendall(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
            probe.settimeout(0.5)
            with pytest.raises(TimeoutError):
                probe.recv(1)
            probe.close()
            assert len(session.calls) == 2
    finally:
        await meter.aclose()
        for s in listeners:
            s.close()
        os.close(read_end)
        os.close(write_end)
    with pytest.raises(ConnectionRefusedError):  # closed with the session
        socket.create_connection(("127.0.0.1", ports[0]), timeout=2)


def test_a_chunked_body_is_unframed_however_its_bytes_arrive() -> None:
    pieces = [b"x" * n for n in (1, 15, 16, 255, 4096, 3)]
    raw = b"".join(b"%x;ext=1\r\n%b\r\n" % (len(p), p) for p in pieces)
    raw += b"0\r\ntrailer: yes\r\n\r\n"
    rng = random.Random(7)
    for _ in range(200):
        frames, out, pos = Unchunk(), [], 0
        while pos < len(raw):
            step = rng.choice((1, 2, 3, 7, 64, 5000))
            out.append(frames.feed(raw[pos : pos + step]))
            pos += step
        assert frames.done and frames.rest == b"" and b"".join(out) == b"".join(pieces)
    frames = Unchunk()
    assert frames.feed(raw + b"HTTP/1.1 200") == b"".join(pieces)
    assert frames.done and frames.rest == b"HTTP/1.1 200"  # past the end: not reused
    for bad in (b"-5\r\nxx\r\n", b"1_0\r\n", b"zz\r\n", b"2\r\nxxYY"):
        with pytest.raises(ValueError):
            Unchunk().feed(bad)
