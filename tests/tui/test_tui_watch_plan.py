"""The watcher's plan is the runner's: one function (``planned_calls``) for both, so a followed
debate or refine run ends at exactly 100% and never runs past it."""

from __future__ import annotations

from pathlib import Path

from eloledger.runner.counters import RunCounters
from eloledger.runner.progress import planned_calls
from eloledger.runner.run import run_experiment
from eloledger.runner.shard import Shard
from eloledger.runner.spec import load_spec
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.sources import spec_plan
from eloledger.tui.testing import screen_text, until

SPEC = """\
[experiment]
name = "rounds"
profile = "sim"
model = "sim-small"
ledger = "rounds.ledger.jsonl"
concurrency = 8
sessions = 2

[sim]
speed = 50.0

[tasks]
source = "builtin:arith"
limit = 3

[judge]
kind = "auto"

[[arms]]
name = "single"
kind = "single"

[[arms]]
name = "debate_2x2"
kind = "debate"
n = 2
rounds = 2

[[arms]]
name = "refine_3"
kind = "refine"
rounds = 3
"""


def write_spec(folder: Path) -> Path:
    spec = folder / "rounds.toml"
    spec.write_text(SPEC, encoding="utf-8")
    return spec


async def test_watcher_total_equals_the_runners_calls_for_debate_and_refine(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path))
    counters = RunCounters()
    await run_experiment(spec, counters=counters)
    ran = {name: arm.done for name, arm in counters.arms.items()}
    runner_plan = {name: arm.planned for name, arm in counters.arms.items()}
    assert ran == runner_plan  # every planned call was made, no more
    assert runner_plan == {"single": 6, "debate_2x2": 3 * 2 * 2 * 2, "refine_3": 3 * 2 * 3}

    found = spec_plan(Path(spec.ledger))
    assert found is not None
    assert found[2] == runner_plan

    app = EloLedgerApp(watch=spec.ledger)
    async with app.run_test(size=(120, 40)):
        watched = app.live_source.counters
        assert await until(lambda: sum(a.done for a in watched.arms.values()) == sum(ran.values()))
        for name, arm in watched.arms.items():
            assert arm.done == arm.planned == runner_plan[name], name
        assert await until(lambda: "24/24" in screen_text(app) and "18/18" in screen_text(app))


def test_a_shard_ledger_gets_the_shards_plan(tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path)
    spec = load_spec(spec_path)
    shard_ledger = tmp_path / "rounds.shard-2-of-2.ledger.jsonl"
    found = spec_plan(shard_ledger)
    assert found is not None and found[0] == spec_path
    # 3 tasks dealt over 2 shards: the second holds one task
    assert found[2] == planned_calls(spec, 3, Shard(2, 2)) == {
        "single": 2,
        "debate_2x2": 8,
        "refine_3": 6,
    }
    assert spec_plan(tmp_path / "other.ledger.jsonl") is None
