"""Real data: the AlpacaEval 2.0 judgments reproduce every published win rate from the fitted Elo.

Every model is judged only against the same baseline, so the Bradley–Terry MLE must satisfy
σ(θ_model − θ_baseline) = mean(preference − 1) for each model, which is the published
``win_rate`` (see tests/data/alpaca_eval2/README.md).
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np

from eloledger.rating.bt import aggregate, fit_bt, to_elo
from eloledger.rating.comparisons import Comparisons, read_comparisons

TOLERANCE_PP = 0.05


def load(data_dir: Path) -> tuple[Comparisons, dict[str, float]]:
    folder = data_dir / "alpaca_eval2"
    tasks, models, baselines, outcomes = [], [], [], []
    with gzip.open(folder / "alpaca_eval2_annotations.csv.gz", "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["preference"] == "":
                continue
            tasks.append(row["instruction_id"])
            models.append(row["model"])
            baselines.append(row["baseline"])
            outcomes.append(float(row["preference"]) - 1.0)
    comps = Comparisons.from_arrays(tasks, models, baselines, outcomes, source="alpaca_eval2")
    with open(folder / "alpaca_eval2_leaderboard.csv", newline="") as fh:
        board = {row[""]: float(row["win_rate"]) for row in csv.DictReader(fh)}
    return comps, board


def test_alpaca_eval_win_rates_reproduced(data_dir: Path) -> None:
    comps, board = load(data_dir)
    assert len(comps) > 45_000 and len(board) >= 50
    fit = fit_bt(aggregate(comps), players=comps.players)
    assert fit.converged and fit.warnings == [] and fit.prior == 0.0
    base = comps.player_index("gpt4_1106_preview")
    elo = to_elo(fit.theta, base)
    checked = 0
    worst = 0.0
    for model, published in board.items():
        if model not in comps.players or model == "gpt4_1106_preview":
            continue
        e = elo[comps.player_index(model)]
        win_rate = 100.0 / (1.0 + 10 ** ((elo[base] - e) / 400.0))
        worst = max(worst, abs(win_rate - published))
        checked += 1
    assert checked == len([m for m in board if m != "gpt4_1106_preview"])
    assert worst < TOLERANCE_PP, f"worst win-rate error {worst:.4f} pp"


def test_alpaca_eval_through_the_file_reader(data_dir: Path, tmp_path: Path) -> None:
    """Same data through the CSV reader (written as a comparisons file) gives the same fit."""
    comps, board = load(data_dir)
    path = tmp_path / "alpaca.csv"
    names, tasks = np.array(comps.players), np.array(comps.tasks)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["task_id", "a", "b", "outcome"])
        w.writerows(
            zip(
                tasks[comps.task],
                names[comps.i],
                names[comps.j],
                comps.outcome.tolist(),
                strict=True,
            )
        )
    again = read_comparisons(path)
    assert sorted(again.players) == sorted(comps.players)
    e1 = to_elo(fit_bt(aggregate(comps)).theta, comps.player_index("gpt4_1106_preview"))
    th2 = fit_bt(aggregate(again)).theta
    e2 = to_elo(th2, again.player_index("gpt4_1106_preview"))
    order = [again.player_index(p) for p in comps.players]
    assert np.max(np.abs(e1 - e2[order])) < 1e-6
    model = "FuseChat-Gemma-2-9B-Instruct"
    k, b = again.player_index(model), again.player_index("gpt4_1106_preview")
    elo = to_elo(th2, b)
    assert abs(100 / (1 + 10 ** ((1000 - elo[k]) / 400)) - board[model]) < TOLERANCE_PP
