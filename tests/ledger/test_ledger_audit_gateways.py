"""`doctor --ledger` and base URLs: a resumed simulator run is one gateway whatever its port;
two real gateways in one run still warn."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import eloledger as _cli
from eloledger.doctor.ledger_audit import audit_ledger

SPEC = """\
[experiment]
name = "res"
profile = "sim"
concurrency = 1

[budget]
max_total_tokens = BUDGET

[sim]
speed = 50

[tasks]
source = "builtin:arith"
limit = 4

[[arms]]
name = "one"
kind = "single"

[[arms]]
name = "two"
kind = "best_of_n"
n = 2
"""


def test_a_resumed_simulator_run_is_not_two_gateways(tmp_path: Path) -> None:
    spec, ledger = tmp_path / "spec.toml", tmp_path / "l.jsonl"
    spec.write_text(SPEC.replace("BUDGET", "300"))  # stops early: the resume has work to do
    args = ["run", str(spec), "--headless", "--quiet", "--bootstrap", "0", "--ledger", str(ledger)]
    assert _cli(*args).returncode == 0
    spec.write_text(SPEC.replace("BUDGET", "1_000_000"))
    assert _cli(*args, "--resume").returncode == 0
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len({r["base_url"] for r in rows}) == 2, "the resume should have used a new sim port"
    assert len({r["run_id"] for r in rows}) == 1
    doctor = _cli("doctor", "--offline", "--ledger", str(ledger))
    assert doctor.returncode == 0, doctor.stdout
    assert "ledger.base_urls" not in doctor.stdout


def test_two_real_gateways_in_one_run_still_warn(tmp_path: Path) -> None:
    base = {"run_id": "r1", "task_id": "t", "arm": "a", "status": "ok", "total_tokens": 3,
            "prompt_tokens": 2, "completion_tokens": 1}  # fmt: skip
    rows = [
        {**base, "sample": 0, "profile": "gw", "base_url": "http://127.0.0.1:4000/v1"},
        {**base, "sample": 1, "profile": "gw", "base_url": "http://127.0.0.1:4001/v1"},
        {**base, "sample": 2, "profile": "sim", "base_url": "http://127.0.0.1:5000/v1"},
        {**base, "sample": 3, "profile": "sim", "base_url": "http://127.0.0.1:5001/v1"},
        {**base, "sample": 4, "profile": "sim", "base_url": "https://sim.example.com/v1"},
    ]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (finding,) = audit_ledger(path)
    assert finding.code == "ledger.base_urls"
    # the two local gateways of profile "gw" and the non-loopback URL: 4 gateways, sim once
    assert "4 different base URLs" in finding.message
    assert "4000" in finding.evidence and "4001" in finding.evidence
    assert "example.com" in finding.evidence and "5001" not in finding.evidence
