"""One interval method everywhere. ``run`` and ``demo`` print the same
task-clustered sandwich intervals (Elo and rank) as ``eloledger elo`` on the run's own
comparisons and ledger; the task bootstrap is an explicit opt-in, labelled as such.

Every run here is the real CLI on the embedded simulator (real HTTP on 127.0.0.1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eloledger.cli import main
from sim_spec import cli_json as _json
from sim_spec import small_demo_spec

INTERVAL_KEYS = ("elo", "ci_low", "ci_high", "rank_low", "rank_high")


def _elo_json(capsys: pytest.CaptureFixture, ledger: Path, *extra: str) -> dict:
    comparisons = ledger.with_name(ledger.name.replace(".ledger.jsonl", ".comparisons.csv"))
    assert comparisons.exists()
    # the run anchors its table at the spec's baseline (its first arm, best_of_1); elo is told
    return _json(
        capsys,
        ["elo", str(comparisons), "--ledger", str(ledger), "--format", "json",
         "--anchor", "best_of_1", *extra],
    )  # fmt: skip


def _same_intervals(run: dict, elo: dict) -> None:
    assert run["anchor"] == elo["anchor"]
    assert run["intervals"] == elo["intervals"]
    mine = {p["name"]: p for p in run["players"]}
    theirs = {p["name"]: p for p in elo["players"]}
    assert set(mine) == set(theirs) and len(mine) >= 3
    for name, player in theirs.items():
        for key in INTERVAL_KEYS:
            assert player[key] is not None, (name, key)
            assert mine[name][key] == pytest.approx(player[key], rel=1e-12, abs=1e-9), (name, key)


def test_demo_prints_the_sandwich_intervals_elo_prints(
    capsys: pytest.CaptureFixture, demo_run
) -> None:
    demo = demo_run.report
    elo = _elo_json(capsys, demo_run.ledger)
    assert demo["intervals"]["method"] == "sandwich" and demo["intervals"]["unit"] == "task"
    assert demo["bootstrap"]["rounds"] == 0  # no bootstrap behind the default intervals
    _same_intervals(demo, elo)
    # the data leave real rank uncertainty, so equal rank CIs are not a trivial 1..1 each
    assert any(p["rank_low"] != p["rank_high"] for p in demo["players"])


def test_run_table_labels_the_sandwich_and_bootstrap_is_opt_in(
    capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    spec = small_demo_spec(tmp_path, 10)
    ledger = tmp_path / "a.ledger.jsonl"
    assert main(["run", str(spec), "--headless", "--quiet", "--ledger", str(ledger)]) == 0
    table = capsys.readouterr().out
    assert "clustered by task (sandwich" in table and "bootstrap rounds" not in table
    run = _json(capsys, ["run", str(spec), "--headless", "--quiet", "--format", "json",
                         "--ledger", str(tmp_path / "b.ledger.jsonl")])  # fmt: skip
    _same_intervals(run, _elo_json(capsys, tmp_path / "b.ledger.jsonl"))

    boot = tmp_path / "c.ledger.jsonl"
    run = _json(capsys, ["run", str(spec), "--headless", "--quiet", "--format", "json",
                         "--bootstrap", "200", "--ledger", str(boot)])  # fmt: skip
    assert run["intervals"]["method"] == "bootstrap" and run["bootstrap"]["rounds"] == 200
    _same_intervals(run, _elo_json(capsys, boot, "--bootstrap", "200"))
    assert main(["run", str(spec), "--headless", "--quiet", "--intervals", "none",
                 "--ledger", str(tmp_path / "d.ledger.jsonl")]) == 0  # fmt: skip
    assert "intervals (relative" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags",
    [("--bootstrap", "-1"), ("--bootstrap", "100", "--intervals", "sandwich")],
)
def test_bad_interval_flags_are_refused_before_any_call(
    capsys: pytest.CaptureFixture, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    spec = small_demo_spec(tmp_path, 10)
    ledger = tmp_path / "x.ledger.jsonl"
    assert main(["run", str(spec), "--headless", "--quiet", "--ledger", str(ledger), *flags]) == 2
    err = capsys.readouterr().err
    assert "--bootstrap" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not ledger.exists()  # nothing was spent on a run whose table would be refused
