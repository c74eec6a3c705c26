"""A key planted in a profile never appears in any output, log, ledger or results file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.profiles.model import Profile
from eloledger.profiles.store import save_profile
from eloledger.sim import running_sim

PLANTED = "plantedKEY-9f8e7d6c5b4a3210zz"  # not key-shaped: only registration can scrub it


@contextlib.contextmanager
def echoing_gateway():
    """A gateway that answers 401 and echoes the Authorization header, as real ones do."""
    ready = threading.Event()
    box: dict = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        auth = ""
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
            if name.lower() == "authorization":
                auth = value.strip()
        await reader.readexactly(length)
        body = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key provided: {auth}",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        writer.write(
            b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    def serve() -> None:
        loop = asyncio.new_event_loop()
        server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
        box["port"] = server.sockets[0].getsockname()[1]
        box["loop"] = loop
        ready.set()
        loop.run_forever()
        server.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(5)
    try:
        yield f"http://127.0.0.1:{box['port']}"
    finally:
        box["loop"].call_soon_threadsafe(box["loop"].stop)
        thread.join(5)


SPEC = """\
[experiment]
name = "secret"
profile = "{profile}"
model = "sim-small"
wire_api = "{wire}"
concurrency = 4

[tasks]
source = "builtin:arith"
limit = 2

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "two"
kind = "best_of_n"
n = 2
"""


def _all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic"])
def test_planted_key_never_leaks(
    tmp_path: Path, temp_home: Path, monkeypatch: pytest.MonkeyPatch, capsys, wire: str
) -> None:
    monkeypatch.setenv("PLANTED_KEY", PLANTED)
    out_dir = tmp_path / "out"
    with running_sim(speed=60.0, api_keys={PLANTED}) as sim, echoing_gateway() as echo:
        save_profile(Profile(name="good", base_url=sim.base_url, key_env="PLANTED_KEY"))
        save_profile(Profile(name="echo", base_url=echo, key_env="PLANTED_KEY"))
        for profile in ("good", "echo"):
            spec = tmp_path / f"{profile}.toml"
            spec.write_text(SPEC.format(profile=profile, wire=wire))
            for fmt in ("json", "table"):
                ledger = out_dir / f"{profile}-{fmt}.ledger.jsonl"
                main(
                    [
                        "run",
                        str(spec),
                        "--headless",
                        "--format",
                        fmt,
                        "--bootstrap",
                        "10",
                        "--ledger",
                        str(ledger),
                    ]
                )
    captured = capsys.readouterr()
    good = (out_dir / "good-json.ledger.jsonl").read_text()
    assert '"status":"ok"' in good  # the key worked against the simulator
    echo_rows = (out_dir / "echo-json.ledger.jsonl").read_text()
    assert '"error_class":"auth"' in echo_rows and "Incorrect API key provided" in echo_rows
    assert "…(" in echo_rows  # the echoed key was replaced by its mask
    for text in (captured.out, captured.err, _all_text(out_dir), _all_text(temp_home)):
        assert PLANTED not in text
        assert PLANTED[:12] not in text
