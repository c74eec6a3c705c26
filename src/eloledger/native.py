"""Whether the compiled parts (ledger/_linescan.c, rating/_spans.c) may be used.

They are optional at install (no C compiler: every reader works on its numpy and msgspec
path) and give the same results as those paths (their tests compare the two).
``ELOLEDGER_NATIVE=0`` turns them off: the benchmarks' second baseline, and a way out.
"""

from __future__ import annotations

import os


def enabled() -> bool:
    return os.environ.get("ELOLEDGER_NATIVE", "1") != "0"
