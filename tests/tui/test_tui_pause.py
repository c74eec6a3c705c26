"""Pause/resume: no tok/s spike on resume, the elapsed timer stops."""

from __future__ import annotations

from eloledger.runner.counters import RunCounters
from eloledger.tui.run_view import RunView
from eloledger.tui.sources import SnapshotSource


class Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class Pausable(SnapshotSource):
    def __init__(self, counters: RunCounters) -> None:
        super().__init__(counters, label="unit", state="running")
        self.paused = False
        self.done = False

    def state(self) -> str:
        return "finished" if self.done else "paused" if self.paused else "running"


def test_resume_does_not_spike_tokens_per_second_and_elapsed_stops() -> None:
    counters = RunCounters()
    clock = Clock(counters.started_at)
    source = Pausable(counters)
    view = RunView(source, clock=clock)

    def step(seconds: float, tokens: int) -> str:
        clock.now += seconds
        counters.total_tokens += tokens
        return view.summary_text(source)

    for _ in range(30):  # 3 s at 100 tok/s, sampled at 10 Hz
        step(0.1, 10)
    steady = view.tokens_per_second(counters)
    assert 90 <= steady <= 110
    source.paused = True
    paused_text = step(0.1, 0)
    assert "00:03" in paused_text
    for _ in range(100):  # 10 s paused: in-flight calls finish, 5,000 tokens arrive
        text = step(0.1, 50)
    assert "tok/s" not in text.splitlines()[1]  # no rate while paused
    assert "00:03" in text  # the timer stood still
    source.paused = False
    rates = []
    for _ in range(20):
        step(0.1, 10)
        rates.append(view._last_rate)
    assert max(rates) <= 1.5 * steady, rates  # no spike from the tokens that came in paused
    source.done = True
    finished = step(0.1, 0)
    later = step(60.0, 0)
    assert finished.splitlines()[0].split()[2] == later.splitlines()[0].split()[2]
