"""A real headless Chromium (Debian's `chromium`, scripts/install_browser.sh) driven over the
DevTools protocol: open a page, wait, screenshot, leave. For the `eloledger serve` tests."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import shutil
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-port=0",
    "--window-size=1280,800",
]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One DevTools session on one page."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self.ids)
        await self.ws.send_json({"id": ident, "method": method, "params": params})
        async for message in self.ws:
            data = message.json()
            if data.get("id") == ident:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data.get("result", {})
        raise RuntimeError(f"{method}: the browser closed the connection")



def rendered(png: bytes) -> bool:
    """Whether a screenshot shows a drawn app, not textual-serve's splash: the app's text
    lights up a few percent of the pixels, the splash a few hundredths of one."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    histogram = image.histogram()
    return sum(histogram[151:]) / (image.width * image.height) > 0.01


async def visit(
    url: str,
    shot: Path,
    *,
    seconds: float = 90.0,
    before_leaving: Callable[[], Awaitable[None]] | None = None,
    steps: Sequence[tuple[str, Sequence[str]]] = (),
    step_wait: float = 4.0,
) -> bool:
    """Open ``url`` in a fresh headless Chromium, wait until the app is drawn (or ``seconds``
    pass), save the PNG screenshot to ``shot``; for each of ``steps`` (file name, keys) press
    the keys and save another screenshot beside it; await ``before_leaving``, leave the page
    and close the browser. Returns whether the app was drawn."""
    binary = chromium()
    assert binary, "chromium is not installed (scripts/install_browser.sh)"
    profile = Path(tempfile.mkdtemp(prefix="eloledger-chromium-"))
    browser = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            await asyncio.sleep(0.1)
        port = port_file.read_text().split()[0]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as answer:
                targets = await answer.json()
            target = next(t for t in targets if t.get("type") == "page")
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws)
                await page.call("Page.enable")
                await page.call("Page.navigate", url=url)
                drawn = False
                end = time.monotonic() + seconds
                while not drawn and time.monotonic() < end:
                    await asyncio.sleep(1.0)
                    png = base64.b64decode((await page.call("Page.captureScreenshot"))["data"])
                    drawn = rendered(png)
                await asyncio.sleep(1.5)  # the last frames
                png = base64.b64decode((await page.call("Page.captureScreenshot"))["data"])
                shot.write_bytes(png)
                if steps:  # keys go to the focused element: click the terminal first
                    for kind in ("mousePressed", "mouseReleased"):
                        await page.call("Input.dispatchMouseEvent", type=kind, x=640, y=400,
                                        button="left", clickCount=1)  # fmt: skip
                for name, keys in steps:  # more views: keys, then a screenshot each
                    for key in keys:
                        await page.call("Input.dispatchKeyEvent", type="keyDown", key=key,
                                        text=key)  # fmt: skip
                        await page.call("Input.dispatchKeyEvent", type="keyUp", key=key)
                        await asyncio.sleep(0.5)
                    await asyncio.sleep(step_wait)
                    png = base64.b64decode((await page.call("Page.captureScreenshot"))["data"])
                    (shot.parent / name).write_bytes(png)
                if before_leaving is not None:
                    await before_leaving()
                with contextlib.suppress(Exception):  # the server may be gone already
                    await page.call("Page.navigate", url="about:blank")
                return drawn
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)
