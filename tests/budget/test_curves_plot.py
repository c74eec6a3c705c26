"""`eloledger curve` on checkpoint rows, and `curve/elo --plot` figures."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checkpoint_truth import planted_rows, write_ledger
from cli_process import eloledger
from eloledger.cli import main

SVG = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("issue22")
    return write_ledger(folder / "agents.jsonl", planted_rows(0, tasks=12, chat_arm=True))


def _svg(path: Path) -> tuple[set[str], str]:
    """The ids of the SVG's groups and all of its text (svg.fonttype none keeps text)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    text = " ".join("".join(el.itertext()) for el in root.iter(f"{SVG}text"))
    return ids, text


def test_curve_uses_checkpoint_rows_json(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["curve", str(ledger), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "checkpoints" and data["axis"] == "tokens"
    verdicts = {a["name"]: a["verdict"] for a in data["arms"]}
    assert verdicts == {"beater": "above", "kshot": "on", "plateau": "below", "sampler": "on"}
    kinds = {a["name"]: a["kind"] for a in data["arms"]}
    assert kinds["kshot"] == "chat" and kinds["sampler"] == "agent"  # the same axes
    for arm in data["arms"]:
        point = arm["points"][-1]
        assert set(point) >= {"budget", "elo", "ci_low", "ci_high", "line", "slope_per_decade",
                              "gap", "gap_ci", "line_kind", "k"}  # fmt: skip
        assert arm["verdict_ci"][0] <= arm["verdict_gap"] <= arm["verdict_ci"][1]
        assert {"accuracy_per_dollar", "accuracy_per_call", "slows_down_after"} <= set(arm)
    plateau = next(a for a in data["arms"] if a["name"] == "plateau")
    assert plateau["slows_down_after"] is not None


def test_curve_table_has_the_columns(ledger: Path) -> None:
    done = eloledger("curve", str(ledger), "--seed", "1")
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[0].split()
    assert head[:4] == ["arm", "budget", "elo", "95%"] and "verdict" in head and "line" in head
    assert "slope/decade" in head
    assert "against repeated sampling" in done.stdout
    # the per-arm table after "against repeated sampling": arm, verdict, gap, ... (kind is in
    # the JSON only, so the table fits 80 columns)
    after = done.stdout.split("against repeated sampling", 1)[1]
    lines = [line.split() for line in after.splitlines()]
    summary = {w[0]: w[1] for w in lines if len(w) > 2 and w[1] in ("above", "on", "below")}
    assert summary == {"beater": "above", "kshot": "on", "plateau": "below", "sampler": "on"}


def test_curve_plot_svg_and_png(ledger: Path, tmp_path: Path) -> None:
    svg, png = tmp_path / "curves.svg", tmp_path / "curves.png"
    assert main(["curve", str(ledger), "--plot", str(svg), "--format", "json"]) == 0
    ids, text = _svg(svg)
    for arm in ("beater", "kshot", "plateau", "sampler"):
        assert f"series-{arm}" in ids and f"line-{arm}" in ids  # curve and its reference line
        assert arm in text
    assert "slows-plateau" in ids and "slows-sampler" not in ids
    assert "session budget, tokens (log scale)" in text and "Elo (anchor" in text
    assert "best of k sessions" in text and "below sampling" in text  # the legend
    assert main(["curve", str(ledger), "--plot", str(png), "--format", "json"]) == 0
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_curve_plot_of_sampling_curves(tmp_path: Path) -> None:
    """A ledger without checkpoints: the plain budget curves, with their best-of-k reference."""
    from eloledger.budget.sampling_sim import sampling_sessions
    from eloledger.ledger import LedgerWriter

    path = tmp_path / "ledger.jsonl"
    with LedgerWriter(path) as writer:
        for row in sampling_sessions(arms=("iid", "stall"), tasks=8, sessions=3, samples=8,
                                     stall_after={"stall": 2}, seed=1):  # fmt: skip
            writer.append(row)
    svg = tmp_path / "plain.svg"
    assert main(["curve", str(path), "--bootstrap", "20", "--plot", str(svg), "--format", "json"]) == 0
    ids, text = _svg(svg)
    assert {"series-iid", "line-iid", "series-stall", "line-stall"} <= ids
    assert "best-of-k reference" in text


def test_elo_plot_diminishing_returns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "elo.svg"
    assert main(["elo", "--example", "--plot", str(svg), "--format", "json"]) == 0
    players = {p["name"] for p in json.loads(capsys.readouterr().out)["players"]}
    ids, text = _svg(svg)
    assert {f"series-{p}" for p in players} <= ids and "line-frontier" in ids
    assert "tokens per task (log scale)" in text and "Diminishing returns" in text
    png = tmp_path / "elo.png"
    assert main(["elo", "--example", "--plot", str(png), "--format", "json"]) == 0
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_elo_plot_without_costs(tmp_path: Path) -> None:
    comps = tmp_path / "c.csv"
    comps.write_text("task_id,winner,loser\n" + "".join(
        f"t{k},a,b\nt{k},b,c\nt{k},{'c' if k % 3 == 0 else 'a'},{'a' if k % 3 == 0 else 'c'}\n"
        for k in range(9)))  # fmt: skip
    svg = tmp_path / "elo.svg"
    assert main(["elo", str(comps), "--plot", str(svg), "--format", "json"]) == 0
    ids, text = _svg(svg)
    assert "series-elo" in ids and "Elo (anchor" in text and "player" in text


def test_bad_plot_name_and_missing_matplotlib_are_one_line_errors(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = eloledger("curve", str(ledger), "--plot", str(tmp_path / "figure.pdf"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert ".svg or .png" in done.stderr and not (tmp_path / "figure.pdf").exists()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    for argv in (["curve", str(ledger)], ["elo", "--example"]):
        assert main([*argv, "--plot", str(tmp_path / "x.svg")]) == 2
        err = capsys.readouterr().err
        assert "matplotlib" in err and "eloledger[plot]" in err and "Traceback" not in err
    assert not (tmp_path / "x.svg").exists()


def test_cost_axis_without_prices_is_a_one_line_error(ledger: Path, tmp_path: Path) -> None:
    env_home = tmp_path / "home"  # a temporary HOME: never the user's own prices.toml
    env_home.mkdir()
    done = eloledger_env(["curve", str(ledger), "--axis", "cost"], {"HOME": str(env_home),
                         "XDG_CONFIG_HOME": str(env_home / ".config")})  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "no price for model" in done.stderr and "prices.toml" in done.stderr
    cfg = env_home / ".config" / "eloledger"
    cfg.mkdir(parents=True)
    (cfg / "prices.toml").write_text('[models."sim-model"]\ninput = 2.0\noutput = 8.0\n')
    done = eloledger_env(["curve", str(ledger), "--axis", "cost", "--format", "json"],
                         {"HOME": str(env_home), "XDG_CONFIG_HOME": str(env_home / ".config")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["axis"] == "cost"
    sampler = next(a for a in data["arms"] if a["name"] == "sampler")
    assert sampler["cost_per_session"] == pytest.approx(12 * (750 * 2.0 + 250 * 8.0) / 1e6)


def eloledger_env(argv: list[str], env: dict[str, str]):
    import os
    import subprocess

    from cli_process import SRC

    return subprocess.run([sys.executable, "-m", "eloledger", *argv], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": SRC, **env})  # fmt: skip


def test_curve_csv_of_a_checkpoint_fit(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    assert main(["curve", str(ledger), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert set(rows[0]) >= {"arm", "budget_value", "elo", "ci_low", "ci_high", "line",
                            "slope_per_decade", "verdict"}  # fmt: skip
    verdicts = {r["arm"]: r["verdict"] for r in rows if r["verdict"]}
    assert verdicts == {"beater": "above", "kshot": "on", "plateau": "below", "sampler": "on"}


def test_bootstrap_options_are_named_as_not_applying(ledger: Path) -> None:
    done = eloledger("curve", str(ledger), "--resample", "sessions")
    assert done.returncode == 0 and "do not apply" in done.stderr
