"""The embedded simulator: a real OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1.

It is a *simulator*: a fake model answering the built-in tasks with a difficulty-dependent
accuracy, used by the demo, the tests and the benchmarks. It never talks to a real provider.

    async with SimServer(speed=20) as sim:          # or: with running_sim(speed=20) as sim:
        openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="any")
        anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="any")

Per request: header ``x-sim-fault: MODE`` (or ``none``) overrides the server's fault mode;
header ``x-sim-sample: KEY`` (or the chat ``seed`` field) names the sample, so the same
(seed, model, temperature, prompt, sample) always gets the same reply.
"""

from __future__ import annotations

from eloledger.sim.faults import FAULT_MODES
from eloledger.sim.server import SimServer, SimStats, running_sim

__all__ = ["FAULT_MODES", "SimServer", "SimStats", "running_sim"]
