"""The embedded simulator: a real OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1.

It is a *simulator*: a fake model answering the built-in tasks with a difficulty-dependent
accuracy, used by the demo, the tests and the benchmarks. It never talks to a real provider.

    async with SimServer(speed=20) as sim:          # or: with running_sim(speed=20) as sim:
        openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="any")
        anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="any")

Per request: header ``x-sim-fault: MODE`` (or ``none``) overrides the server's fault mode;
header ``x-sim-sample: KEY`` (or the chat ``seed`` field) names the sample, so the same
(seed, model, temperature, prompt, sample) always gets the same reply.

Agents (Claude Code, Codex, Gemini CLI): a request that offers tools (Anthropic ``tools``,
Responses function tools, any Gemini ``/v1beta/models/<model>:generateContent`` call) is
answered by the simulated agent of ``sim.agent``, which works on ``builtin:agent-code`` tasks
through the client's shell tool. ``x-sim-sample`` (sent by the CLIs' custom-header settings)
names the session; without it sessions of one (model, task) are numbered in arrival order.
Codex's WebSocket upgrade gets a 426 so it falls back to HTTPS at once.
"""

from __future__ import annotations

from eloledger.sim.faults import FAULT_MODES
from eloledger.sim.server import SimServer, SimStats, running_sim

__all__ = ["FAULT_MODES", "SimServer", "SimStats", "running_sim"]
