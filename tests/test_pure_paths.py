"""The readers without their compiled parts, as an install without a C compiler runs them.

With the scanner and the span factoriser built, plain batches never reach the msgspec and
numpy paths in the other tests. So the reader and comparisons test modules run again here in
a child pytest with ``ELOLEDGER_NATIVE=0``: those paths stay tested as the fallback they are.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = (
    "test_hostile_ledger.py",
    "test_issue21_dedupe.py",
    "test_issue21_outcomes.py",
    "test_issue21_tally.py",
    "test_ledger_alias_fast.py",
    "test_ledger_estimated.py",
    "test_ledger_fastcols.py",
    "test_ledger_multi.py",
    "test_ledger_reader.py",
    "test_ledger_sessions.py",
    "test_ledger_summary.py",
    "test_rating_comparisons.py",
    "test_rating_length.py",
)


def test_reader_tests_pass_on_the_msgspec_and_numpy_paths() -> None:
    env = {**os.environ, "ELOLEDGER_NATIVE": "0"}
    paths = [str(ROOT / "tests" / name) for name in MODULES]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *paths,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-500:]
