"""Make docs/figures/serve-*.png: `eloledger serve --watch` on a finished demo run, in Debian's
headless Chromium (scripts/install_browser.sh): the Run view, the Elo tab, its budget curves.

    .venv/bin/python docs/make_serve_screenshots.py   # runs a small demo first (~15 s)
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from browser_support import visit  # noqa: E402
from sim_spec import small_demo_spec  # noqa: E402


def main() -> int:
    folder = Path(tempfile.mkdtemp())
    spec = small_demo_spec(folder, 6)
    subprocess.run([sys.executable, "-m", "eloledger", "run", str(spec), "--headless",
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "eloledger", "serve", "--port", str(port),
                               "--watch", str(folder / "demo.ledger.jsonl")])  # fmt: skip
    try:
        time.sleep(3)
        out = HERE / "figures"
        out.mkdir(exist_ok=True)
        steps = [("serve-elo.png", ["4"]), ("serve-curves.png", ["v"])]
        return 0 if asyncio.run(visit(f"http://127.0.0.1:{port}/", out / "serve-run.png",
                                      steps=steps, step_wait=8.0)) else 1  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    raise SystemExit(main())
