"""The runner: experiment spec, arms, async sampler, provider clients, live counters."""
