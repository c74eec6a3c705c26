"""The shared types live where both users can import them without a
cycle, and the agents package needs nothing of the runner (no shim left behind).

tests/core/test_layering_no_cycles.py checks the whole import graph; these name the two moves.
"""

from __future__ import annotations

import importlib.util

from test_layering_no_cycles import SRC, cycles, import_graph, layer_breaks

from eloledger.agents import events
from eloledger.runner import judging, run
from eloledger.runner.result import RunResult


def test_run_and_judging_share_run_result_from_its_own_module() -> None:
    assert RunResult.__module__ == "eloledger.runner.result"
    assert run.RunResult is RunResult and judging.RunResult is RunResult
    graph = import_graph(SRC)
    assert "eloledger.runner.run" not in graph["eloledger.runner.judging"]
    assert not [c for c in cycles(graph) if any(m.startswith("eloledger.runner") for m in c)]


def test_agent_session_shapes_live_in_the_agents_package() -> None:
    assert events.SessionState.__module__ == "eloledger.agents.events"
    assert importlib.util.find_spec("eloledger.runner.agent_events") is None  # no shim
    graph = import_graph(SRC)
    for cli in ("claude_code", "codex", "gemini_cli"):
        assert "eloledger.agents.events" in graph[f"eloledger.agents.{cli}.headless"]
    assert layer_breaks(graph) == set()
