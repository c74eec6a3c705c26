"""Length-controlled Elo: a simulated judge with a planted length preference (the controlled
fit recovers the truth, the raw one does not), real AlpacaEval 2.0 judgments, the CLI."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from eloledger.cli import main
from eloledger.rating.bt import ELO_SCALE, aggregate, fit_bt, to_elo
from eloledger.rating.comparisons import Comparisons, read_comparisons
from eloledger.rating.length import length_controlled
from eloledger.report.elo_table import elo_report

TRUE_THETA = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
LOG_LENGTH = np.array([7.0, 6.0, 5.5, 5.0, 4.5, 4.0])  # the weaker, the wordier


def judged(rng: np.random.Generator, beta: float, tasks: int = 600) -> Comparisons:
    """Every task: all pairs, answer lengths around each player's typical length; the judge
    prefers a by σ(θa − θb + β·tanh(Δ/s)) — a planted length preference of β."""
    n = TRUE_THETA.size
    a, b = np.triu_indices(n, 1)
    task = np.repeat(np.arange(tasks), a.size)
    a, b = np.tile(a, tasks), np.tile(b, tasks)
    length = np.exp(LOG_LENGTH + rng.normal(0.0, 0.3, (tasks, n))).round()
    a_tok, b_tok = length[task, a], length[task, b]
    delta = np.log(a_tok) - np.log(b_tok)
    scale = np.sqrt(np.mean(delta**2))  # the model's s: the RMS of Δ
    d = TRUE_THETA[a] - TRUE_THETA[b] + beta * np.tanh(delta / scale)
    outcome = (rng.random(a.size) < 1.0 / (1.0 + np.exp(-d))).astype(float)
    names = np.array([f"arm{k}" for k in range(n)])
    return Comparisons.from_arrays(
        task, names[a], names[b], outcome, a_tokens=a_tok, b_tokens=b_tok
    )


def test_planted_length_preference_recovered_raw_elo_fooled() -> None:
    # β = 1.5 on the RMS scale (the planted preference is as strong as the old β = 1.0 on sd(Δ))
    comps = judged(np.random.default_rng(7), beta=1.5)
    truth = ELO_SCALE * TRUE_THETA + 1000.0
    raw = to_elo(fit_bt(aggregate(comps)).theta, 0)
    lc = length_controlled(comps, anchor=0)
    # Raw Elo puts the wordy, weakest player first and the terse, strongest below it.
    assert np.argmax(raw) == 0 and raw[5] < raw[0] - 50
    assert np.max(np.abs(raw - truth)) > 150
    # Controlled: every player's truth inside its interval and the order right.
    assert np.all((lc.lc.ci_low <= truth) & (truth <= lc.lc.ci_high)), (lc.lc_elo, truth)
    assert np.all(np.diff(lc.lc_elo) > 0)
    assert np.max(np.abs(lc.lc_elo - truth)) < 40  # vs > 150 raw
    coef = lc.length_coef()
    assert coef["ci_low"] <= ELO_SCALE * 1.5 <= coef["ci_high"]
    assert coef["comparisons_with_tokens"] == len(comps)


def test_no_length_preference_gives_beta_near_zero() -> None:
    comps = judged(np.random.default_rng(8), beta=0.0)
    lc = length_controlled(comps, anchor=0)
    coef = lc.length_coef()
    assert coef["ci_low"] < 0.0 < coef["ci_high"], coef
    raw = to_elo(fit_bt(aggregate(comps)).theta, 0)
    assert np.max(np.abs(lc.lc_elo - raw)) < 40  # nothing to correct, little moves


def test_rows_without_lengths_are_kept_with_a_warning() -> None:
    comps = judged(np.random.default_rng(9), beta=1.0, tasks=200)
    a_tok = comps.a_tokens.copy()
    a_tok[::10] = np.nan
    names = np.array(comps.players)
    partial = Comparisons.from_arrays(
        comps.task, names[comps.i], names[comps.j], comps.outcome,
        a_tokens=a_tok, b_tokens=comps.b_tokens,
    )  # fmt: skip
    lc = length_controlled(partial, anchor=0)
    assert lc.rows_with_tokens == len(comps) - len(a_tok[::10])
    assert any("lack a_tokens/b_tokens" in w for w in lc.warnings)
    assert np.all(np.diff(lc.lc_elo) > 0)


# --------------------------------------------------------------------------- AlpacaEval 2.0


def alpaca(data_dir: Path) -> tuple[Comparisons, dict[str, dict[str, str]]]:
    """Model vs baseline judgments with output lengths (characters: the data has no token
    counts; the model uses only the log ratio, for which characters are a fair proxy)."""
    folder = data_dir / "alpaca_eval2"
    cols: dict[str, list] = {k: [] for k in ("t", "a", "b", "o", "la", "lb")}
    with gzip.open(folder / "alpaca_eval2_annotations.csv.gz", "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["preference"] == "":
                continue
            cols["t"].append(row["instruction_id"])
            cols["a"].append(row["model"])
            cols["b"].append(row["baseline"])
            cols["o"].append(float(row["preference"]) - 1.0)
            cols["la"].append(float(row["model_len_chars"]))
            cols["lb"].append(float(row["baseline_len_chars"]))
    comps = Comparisons.from_arrays(
        cols["t"], cols["a"], cols["b"], cols["o"], a_tokens=cols["la"], b_tokens=cols["lb"],
        source="alpaca_eval2",
    )  # fmt: skip
    with open(folder / "alpaca_eval2_leaderboard.csv", newline="") as fh:
        board = {row[""]: row for row in csv.DictReader(fh)}
    return comps, board


def _ranks(values: list[float]) -> np.ndarray:
    return np.argsort(np.argsort(values)).astype(float)


def _spearman(x: list[float], y: list[float]) -> float:
    return float(np.corrcoef(_ranks(x), _ranks(y))[0, 1])


def test_alpaca_eval_length_control_changes_the_order(data_dir: Path) -> None:
    comps, board = alpaca(data_dir)
    report = elo_report(
        comps, anchor="gpt4_1106_preview", intervals="sandwich", length_control=True
    )
    coef = report.length_coef
    # The GPT-4 Turbo judge pays a lot for length: about +310 Elo at saturation.
    assert coef["ci_low"] > 200.0 and coef["elo"] < 450.0, coef
    rec = {p["name"]: p for p in report.players}
    # The same model asked to be verbose or concise: raw Elo says verbose is ~105 better,
    # controlled Elo says they are the same model (the gap is inside the noise).
    verbose, concise = rec["gpt-3.5-turbo-1106_verbose"], rec["gpt-3.5-turbo-1106_concise"]
    assert verbose["elo"] - concise["elo"] > 80.0
    assert abs(verbose["lc_elo"] - concise["lc_elo"]) < 30.0
    # The terse gpt4_0613_concise climbs from 17th to the top 10.
    raw_rank = [p["name"] for p in sorted(report.players, key=lambda p: -p["elo"])]
    lc_rank = [p["name"] for p in sorted(report.players, key=lambda p: -p["lc_elo"])]
    assert raw_rank.index("gpt4_0613_concise") >= 15 and lc_rank.index("gpt4_0613_concise") < 10
    # Closer to AlpacaEval's own length-controlled win rates than the raw Elo is.
    names = [n for n in rec if n in board and n != "gpt4_1106_preview"]
    lcwr = [float(board[n]["length_controlled_winrate"]) for n in names]
    raw_rho = _spearman([rec[n]["elo"] for n in names], lcwr)
    lc_rho = _spearman([rec[n]["lc_elo"] for n in names], lcwr)
    assert lc_rho > raw_rho + 0.01 and lc_rho > 0.97, (raw_rho, lc_rho)


# --------------------------------------------------------------------------- CLI


def _write(path: Path, comps: Comparisons) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task_id", "a", "b", "outcome", "a_tokens", "b_tokens"])
        for k in range(len(comps)):
            w.writerow(
                [
                    f"t{comps.task[k]}",
                    comps.players[comps.i[k]],
                    comps.players[comps.j[k]],
                    f"{comps.outcome[k]:g}",
                    f"{comps.a_tokens[k]:.0f}",
                    f"{comps.b_tokens[k]:.0f}",
                ]
            )
    return path


def test_cli_length_control_json_table_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "c.csv", judged(np.random.default_rng(3), beta=1.0, tasks=300))
    assert main(["elo", str(path), "--length-control", "--anchor", "arm0", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    coef = report["length_coef"]
    assert coef["ci_low"] < coef["elo"] < coef["ci_high"] and coef["ci_low"] > 100
    players = {p["name"]: p for p in report["players"]}
    assert players["arm5"]["lc_elo"] > players["arm0"]["lc_elo"] == 1000.0
    assert players["arm5"]["elo"] < players["arm0"]["elo"]  # raw is fooled by length
    assert all(p["lc_ci_low"] <= p["lc_elo"] <= p["lc_ci_high"] for p in report["players"])
    assert main(["elo", str(path), "--length-control", "--anchor", "arm0"]) == 0
    out = capsys.readouterr().out
    assert "lc_elo" in out.splitlines()[0] and "LC 95% CI" in out.splitlines()[0]
    assert "length_coef β = +" in out
    assert main(["elo", str(path), "--length-control", "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert header[-3:] == ["lc_elo", "lc_ci_low", "lc_ci_high"]
    assert main(["elo", str(path), "--format", "json"]) == 0  # without the flag: no LC
    assert "length_coef" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("task_id,a,b,outcome\nt1,x,y,1\nt2,y,x,1\n", "no a_tokens,b_tokens columns"),
        ("task_id,a,b,outcome,a_tokens,b_tokens\nt1,x,y,1,,\n", "no comparison has both"),
        (
            "task_id,a,b,outcome,a_tokens,b_tokens\nt1,x,y,1,10,20\nt2,x,y,0,10,20\n",
            "same length ratio",
        ),
        ("task_id,a,b,outcome,a_tokens,b_tokens\nt1,x,y,1,-4,20\n", "c.csv:2: a_tokens -4.0"),
        ("task_id,a,b,outcome,a_tokens,b_tokens\nt1,x,y,1,10,lots\n", "c.csv:2: b_tokens must"),
    ],
)
def test_cli_length_control_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    path = tmp_path / "c.csv"
    path.write_text(body)
    assert main(["elo", str(path), "--length-control"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "fix:" in err[0], err


def test_runner_writes_lengths_and_elo_uses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], demo_run
) -> None:
    """The real pipeline (simulator, runner, ledger, judge): the comparisons file carries each
    side's completion tokens, equal to the ledger row of the answer it selected (best_of_1 has
    one sample, so its selected answer is that sample), and --length-control runs on it."""
    ledger = demo_run.ledger
    single = {}
    for line in ledger.read_text().splitlines():
        row = json.loads(line)
        if row["arm"] == "best_of_1" and row["role"] == "sample" and row["status"] == "ok":
            single.setdefault(row["task_id"], []).append(row["completion_tokens"])
    path = demo_run.comparisons
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and list(rows[0]) == ["task_id", "a", "b", "outcome", "a_tokens", "b_tokens"]
    checked = 0
    for row in rows:
        for side in ("a", "b"):
            assert row[f"{side}_tokens"] != ""
            if row[side] == "best_of_1":
                tokens = single[row["task_id"]]
                assert float(row[f"{side}_tokens"]) == pytest.approx(sum(tokens) / len(tokens))
                checked += 1
    assert checked >= 40
    assert main(["elo", str(path), "--length-control", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["length_coef"]["comparisons_with_tokens"] == len(rows)
    assert all("lc_elo" in p for p in report["players"])


def test_lengths_read_the_same_from_every_reader(tmp_path: Path) -> None:
    """CSV fast path, CSV careful path (quotes), JSONL and records: the same lengths, NaN where
    a field is empty or missing; files without the columns have none."""
    fast = tmp_path / "fast.csv"
    fast.write_text("task_id,a,b,outcome,a_tokens,b_tokens\nt1,x,y,1,120,80\nt2,y,x,0,,35\n")
    careful = tmp_path / "careful.csv"
    careful.write_text('task_id,a,b,outcome,a_tokens,b_tokens\n"t1",x,y,1,120,80\nt2,"y",x,0,,35\n')
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text(
        '{"task_id": "t1", "a": "x", "b": "y", "outcome": 1, "a_tokens": 120, "b_tokens": 80}\n'
        '{"task_id": "t2", "a": "y", "b": "x", "outcome": 0, "b_tokens": 35}\n'
    )
    records = Comparisons.from_records(
        [
            {"task_id": "t1", "winner": "x", "loser": "y", "a_tokens": 120, "b_tokens": 80},
            {"task_id": "t2", "winner": "x", "loser": "y", "a_tokens": None, "b_tokens": 35},
        ]
    )
    for comps in (*(read_comparisons(p) for p in (fast, careful, jsonl)), records):
        np.testing.assert_array_equal(comps.a_tokens, [120.0, np.nan])
        np.testing.assert_array_equal(comps.b_tokens, [80.0, 35.0])
    plain = tmp_path / "plain.csv"
    plain.write_text("task_id,a,b,outcome\nt1,x,y,1\n")
    assert read_comparisons(plain).a_tokens is None
