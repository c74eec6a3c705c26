"""64 concurrent streams through the async SDKs against an in-loop SimServer."""

from __future__ import annotations

import asyncio

import anthropic
import openai

from eloledger.sim import SimServer
from eloledger.tasks import load_tasks

TASKS = load_tasks("builtin:arith")


async def test_64_concurrent_streams_complete_with_usage() -> None:
    async with SimServer(speed=4, seed=5) as sim:
        oai = openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)
        ant = anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="k", max_retries=0)

        async def chat(i: int) -> int:
            stream = await oai.chat.completions.create(
                model="sim-small",
                messages=[{"role": "user", "content": TASKS[i % len(TASKS)].prompt}],
                stream=True,
                stream_options={"include_usage": True},
            )
            events = 0
            usage = None
            async for chunk in stream:
                events += 1
                usage = chunk.usage or usage
            assert usage is not None and usage.completion_tokens >= events - 3
            return usage.completion_tokens

        async def messages(i: int) -> int:
            async with ant.messages.stream(
                model="sim-large",
                max_tokens=2000,
                messages=[{"role": "user", "content": TASKS[-1 - i % len(TASKS)].prompt}],
            ) as stream:
                final = await stream.get_final_message()
            return final.usage.output_tokens

        counts = await asyncio.gather(
            *(chat(i) for i in range(48)), *(messages(i) for i in range(16))
        )
        await oai.close()
        await ant.close()
        assert len(counts) == 64 and min(counts) >= 20
        assert sim.stats.completion_tokens == sum(counts)
        # (nearly) all in flight together: concurrency shown by the server's own count, not by
        # a wall-clock budget a loaded machine can miss (the speed is bench/sim_streams.py's)
        assert sim.stats.streams_peak >= 56
        assert sim.stats.streams_active == 0
