"""textual-serve's server, made sure that every app process it starts ends.

Why: textual-serve starts one app process per browser tab and asks it to quit when the tab's
websocket closes, but a browser that leaves abruptly could leave the process running (five of
five headless visits did, rendering to nobody at 13–19% of a core, re-parented to init when
the server stopped). Here the end of each websocket, whatever the path, ends its process:
the quit packet, then SIGTERM (the app exits on it, ``tui.lifetime``), then SIGKILL; and the
server's shutdown ends every process still running.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

GRACE_S = 3.0  # for each step: quit packet, then SIGTERM, then SIGKILL


async def end_process(service: AppService) -> None:
    """Ask the app to quit; if it has not ended after GRACE_S, SIGTERM, then SIGKILL."""
    process = service._process
    with contextlib.suppress(Exception):
        await asyncio.wait_for(service.stop(), GRACE_S)
    if process is None:
        return
    for step in (process.terminate, process.kill):
        if process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            step()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE_S)


class AppServer(Server):
    """A textual-serve ``Server`` whose app processes never outlive their browser tab."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.services: set[AppService] = set()

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handler, with one ``finally`` that ends the process."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        service: AppService | None = None
        try:
            await websocket.prepare(request)
            service = AppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            self.services.add(service)
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await websocket.close()
        finally:
            if service is not None:
                # shielded: a cancelled handler (the server stopping) still ends its app
                await asyncio.shield(end_process(service))
                self.services.discard(service)
        return websocket

    async def on_shutdown(self, app: web.Application) -> None:
        await asyncio.gather(*(end_process(s) for s in list(self.services)))
