"""The corpus the REAL CLIs wrote (tests/e2e/test_e2e_import.py regenerates it): import equals
what the strict gateway billed, per session; a second import adds nothing.

Each CLI ran a tool-using session (replies with a text block and a tool call; usage varying per
request with cache reads and writes) and then resumed it. billed.json is the gateway's own record.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from import_support import DATA, run

sys.path.insert(0, str(Path(__file__).parent.parent / "e2e"))
from test_e2e_import import billed_by_session, is_unlogged_side_call  # noqa: E402

REAL = DATA / "real"
AGENTS = ("claude-code", "codex", "gemini-cli")  # each is also its import kind


@pytest.mark.parametrize("agent", AGENTS)
def test_real_corpus_imports_to_the_billed_totals(agent: str, tmp_path: Path) -> None:
    steps = json.loads((REAL / agent / "billed.json").read_text())
    ledger = tmp_path / "l.jsonl"
    report, rows = run(agent, REAL / agent, ledger)
    got: dict[str, int] = {}
    for row in rows:
        got[row["session"]] = got.get(row["session"], 0) + row["total_tokens"]
    assert got == billed_by_session(agent, steps)
    assert not report.unknown
    logged = [b for s in steps for b in s["billed"] if not is_unlogged_side_call(agent, b)]
    assert len(rows) == len(logged)  # one row per billed call, not per line
    fields = ("prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens")
    for field in (*fields, "reasoning_tokens"):
        assert sum(r[field] for r in rows) == sum(b[field] for b in logged), field
    again, _ = run(agent, REAL / agent, ledger)
    assert again.calls == 0


def test_the_resumed_session_is_in_the_corpus() -> None:
    for agent in AGENTS:
        steps = json.loads((REAL / agent / "billed.json").read_text())
        assert len(steps) == 2 and all(s["billed"] for s in steps), agent
