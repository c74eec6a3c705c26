"""Make docs/checkpoint-curves.svg: `eloledger curve --plot` on a planted-truth ledger.

    .venv/bin/python docs/make_checkpoint_figure.py   # writes docs/checkpoint-curves.svg

The ledger is tests/checkpoint_truth.py's (seed 0, 20 tasks, 12 sessions per arm): agents that
improve exactly like sampling again (sampler), plateau after three attempts (plateau) and
beat sampling (beater), plus a k-shot chat arm (kshot). The SVG has no date in it, so the
same eloledger gives the same file.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from eloledger.cli import main  # noqa: E402
from checkpoint_truth import planted_rows, write_ledger  # noqa: E402

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        ledger = write_ledger(Path(folder) / "agents.jsonl", planted_rows(0, chat_arm=True))
        code = main(["curve", str(ledger), "--plot", str(HERE / "checkpoint-curves.svg")])
    raise SystemExit(code)
