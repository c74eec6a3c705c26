"""The run summary's own per-arm lines show p50/p95 latency, and the
JSON ``arms`` carry them: the same numbers ``eloledger tokens`` and ``elo --ledger`` print, and
the percentiles of the ledger's own ok rows. Real runs on the embedded simulator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pty_support import run_on_pty
from sim_spec import cli_json as _json
from sim_spec import small_demo_spec


def test_run_arms_carry_the_latency_tokens_and_elo_print(
    capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    ledger = tmp_path / "r.ledger.jsonl"
    run = _json(capsys, ["run", str(small_demo_spec(tmp_path, 6)), "--headless", "--quiet", "--format", "json",
                         "--bootstrap", "0", "--ledger", str(ledger)])  # fmt: skip
    tokens = _json(capsys, ["tokens", str(ledger), "--by", "arm", "--format", "json"])
    by_tokens = {g["name"]: g for g in tokens["groups"]}
    players = {p["name"]: p for p in run["players"]}  # the Elo table's (elo --ledger) figures
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(run["arms"]) == 7
    for arm in run["arms"]:
        name = arm["arm"]
        own = [r["latency_ms"] for r in rows
               if r["arm"] == name and r["role"] == "sample" and r["status"] == "ok"]  # fmt: skip
        p50, p95 = np.percentile(own, [50, 95])
        assert arm["latency_p50_ms"] == pytest.approx(p50, abs=1e-3) and arm["latency_p50_ms"] > 0
        assert arm["latency_p95_ms"] == pytest.approx(p95, abs=1e-3)
        assert arm["latency_p95_ms"] >= arm["latency_p50_ms"]
        for other in (by_tokens[name], players[name]):
            assert (other["latency_p50_ms"], other["latency_p95_ms"]) == (
                arm["latency_p50_ms"], arm["latency_p95_ms"],
            )  # fmt: skip


def test_run_table_shows_p50_on_80_columns_and_both_when_wide(tmp_path: Path) -> None:
    spec = small_demo_spec(tmp_path, 6)
    for cols, wanted in ((80, ["p50 ms"]), (200, ["p50 ms", "p95 ms"])):
        ledger = tmp_path / f"w{cols}.ledger.jsonl"
        status, out = run_on_pty(["run", str(spec), "--headless", "--quiet", "--bootstrap", "0",
                                  "--ledger", str(ledger)], cols=cols)  # fmt: skip
        assert status == 0, out
        lines = out.splitlines()
        header = next(line for line in lines if line.startswith("arm "))
        assert all(w in header for w in wanted), header
        table = lines[lines.index(header) :]
        assert max(len(line) for line in table) <= cols
        row = next(line for line in table if line.startswith("best_of_1 "))
        p50 = int(row.split()[header.split().index("p50")])  # "p50 ms" is two words
        assert p50 > 0
