"""A gateway that sends no usage: every summary says the tokens are estimated.

A real `eloledger run` against the strict gateway (not the simulator) in mode
``stream_no_usage``: the runner streams, gets no usage, and writes character estimates. Then
`tokens`, `elo --ledger` and `doctor --ledger` must each say so, naming the arms.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_process import eloledger as _cli
from strict_gateway import GOOD_KEY, GatewayConfig, serve

SPEC = """\
[experiment]
name = "est"
profile = "gw"
model = "gpt-strict"
wire_api = "openai-chat"
concurrency = 4

[tasks]
source = "builtin:arith"
limit = 4

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "three"
kind = "best_of_n"
n = 3
"""


def add_gateway_profile(root: str) -> None:
    """Profile "gw" (key in $GW_KEY) pointing at a strict gateway's root."""
    added = _cli(
        "profile", "add", "gw", "--base-url", root, "--key-env", "GW_KEY",
        "--wire-api", "openai-chat", "--model", "gpt-strict",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr


def run_against_gateway(tmp_path: Path, mode: str) -> tuple[Path, list]:
    """`eloledger run` of SPEC against the strict gateway in ``mode``: (ledger, requests)."""
    ledger = tmp_path / "l.jsonl"
    (tmp_path / "spec.toml").write_text(SPEC)
    with serve(GatewayConfig(mode=mode)) as gw:
        add_gateway_profile(gw.root)
        run = _cli(
            "run", str(tmp_path / "spec.toml"), "--headless", "--quiet", "--bootstrap", "0",
            "--ledger", str(ledger),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
    return ledger, gw.requests


@pytest.fixture
def estimated_ledger(temp_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("GW_KEY", GOOD_KEY)
    ledger, requests = run_against_gateway(tmp_path, "stream_no_usage")
    streamed = [r for r in requests if r.body and r.body.get("stream")]
    assert streamed, "the runner should have streamed (the gateway drops usage on streams)"
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert rows and all(r["usage_source"] == "estimated" for r in rows)
    return ledger


def test_tokens_elo_and_doctor_all_say_estimated(estimated_ledger: Path) -> None:
    ledger = estimated_ledger
    done = _cli("tokens", str(ledger), "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    groups = {g["name"]: g for g in out["groups"]}
    assert groups["one"]["usage_estimated"] == 4 and groups["three"]["usage_estimated"] == 12
    assert groups["one"]["estimated_token_share"] == 1.0
    assert any("ESTIMATED" in w and "one (4)" in w and "three (12)" in w for w in out["warnings"])

    table = _cli("tokens", str(ledger))
    assert table.returncode == 0
    assert "estimated" in table.stdout.splitlines()[0]
    assert "ESTIMATED token counts" in table.stderr and "include_usage" in table.stderr

    comps = ledger.with_name("l.comparisons.csv")
    elo = _cli("elo", str(comps), "--ledger", str(ledger), "--bootstrap", "0", "--format", "json")
    assert elo.returncode == 0, elo.stderr
    warnings = json.loads(elo.stdout)["warnings"]
    assert any(
        "ESTIMATED" in w and "one (4 calls" in w and "three (12 calls" in w for w in warnings
    )

    doctor = _cli("doctor", "--ledger", str(ledger))
    assert doctor.returncode == 1  # a warning, not "No problems found"
    assert "ledger.usage_missing" in doctor.stdout and "16 of 16 ok rows" in doctor.stdout
    assert "include_usage" in doctor.stdout


def test_summary_api_exposes_usage_estimated(estimated_ledger: Path) -> None:
    """What the TUI and ``elo --ledger`` read: ``usage_estimated`` on the tally's groups and
    on the arms' outcomes."""
    from eloledger.budget.outcomes import ledger_outcomes
    from eloledger.ledger.merge import read_ledgers
    from eloledger.ledger.tally import tally_ledger

    tally, _ = tally_ledger(read_ledgers(estimated_ledger), "arm", None)
    assert {g["name"]: g["usage_estimated"] for g in tally.groups()} == {"one": 4, "three": 12}
    costs, _ = ledger_outcomes(estimated_ledger)
    assert costs["three"].usage_estimated == 12 and costs["three"].estimated_token_share == 1.0


def test_doctor_keeps_missing_usage_an_error_next_to_estimates(tmp_path: Path) -> None:
    from eloledger.doctor.ledger_audit import audit_ledger

    base = {"run_id": "r", "task_id": "t", "arm": "a", "status": "ok", "model": "m"}
    rows = [
        {**base, "sample": 0, "usage_source": "estimated", "prompt_tokens": 3, "total_tokens": 4},
        {**base, "sample": 1, "usage_source": "missing"},
    ]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (finding,) = audit_ledger(path)
    assert finding.code == "ledger.usage_missing" and finding.severity == "error"
    assert "1 of 2 ok rows carry ESTIMATED" in finding.message and "1 more" in finding.message
