"""Make docs/figures/serve-*.png: `eloledger serve --watch` in Debian's headless Chromium
(scripts/install_browser.sh).

- serve-run.png, serve-elo.png: the Run view and the Elo tab of a finished small demo run;
- serve-curves.png: the checkpoint curves (agent sessions snapshotted inside, against
  repeated sampling) of a ledger with checkpoint rows: tests/checkpoint_truth.py's planted
  agents (seed 0: sampler, plateau, beater and a k-shot chat arm; the ledger
  docs/make_checkpoint_figure.py draws), judged task by task on their final scores.

    .venv/bin/python docs/make_serve_screenshots.py   # runs a small demo first (~15 s)
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from browser_support import visit  # noqa: E402
from eloledger.judges.compare import ArmResult, score_comparisons, write_comparisons  # noqa: E402
from checkpoint_truth import planted_rows, write_ledger  # noqa: E402
from sim_spec import small_demo_spec  # noqa: E402


def checkpoint_ledger(folder: Path) -> Path:
    """The planted agents' ledger and its comparisons file (each session's final score; the
    chat arm's session is its best of k calls), so the Elo tab opens and `v` draws the
    checkpoint curves."""
    rows = planted_rows(0, chat_arm=True)
    ledger = write_ledger(folder / "agents.jsonl", rows)
    best: dict[tuple[str, str, int], float] = defaultdict(float)
    for row in rows:
        if row.get("role") == "sample":
            key = (row["task_id"], row["arm"], row["session"])
            best[key] = max(best[key], row["score"])
    results = [
        ArmResult(task, arm, session, 0, None, score, None, 1, 1)
        for (task, arm, session), score in best.items()
    ]
    arms = list(dict.fromkeys(arm for _, arm, _ in best))
    write_comparisons(folder / "agents.comparisons.csv", score_comparisons(results, arms))
    return ledger


def serve(ledger: Path, shot: Path, steps: list[tuple[str, list[str]]]) -> bool:
    """`eloledger serve --watch LEDGER` on a free port, one browser visit, the server stopped."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "eloledger", "serve", "--port", str(port),
                               "--watch", str(ledger)])  # fmt: skip
    try:
        time.sleep(3)
        return asyncio.run(visit(f"http://127.0.0.1:{port}/", shot, steps=steps, step_wait=8.0))
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    folder = Path(tempfile.mkdtemp())
    spec = small_demo_spec(folder, 6)
    subprocess.run([sys.executable, "-m", "eloledger", "run", str(spec), "--headless",
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    out = HERE / "figures"
    out.mkdir(exist_ok=True)
    ok = serve(folder / "demo.ledger.jsonl", out / "serve-run.png", [("serve-elo.png", ["4"])])
    # the checkpoint ledger: its Run view and Elo table are scratch, its curves the figure
    scratch = folder / "shots"
    scratch.mkdir()
    ok = serve(checkpoint_ledger(folder), scratch / "run.png",
               [("elo.png", ["4"]), ("serve-curves.png", ["v"])]) and ok  # fmt: skip
    (scratch / "serve-curves.png").replace(out / "serve-curves.png")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
