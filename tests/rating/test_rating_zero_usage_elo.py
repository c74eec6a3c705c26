"""``elo --ledger``: an ok call whose usage says zero is missing usage, never a free call.

Seed 000's "usage recorded as 0": a gateway drops usage on some calls and the ledger says 0/0/0.
``tokens`` leaves those calls out of its sums (``usage_missing``); the Elo table's per-token
columns used to add them as 0 tokens, halving an arm's cost and doubling its Elo per 1K tokens.
Now, in an arm whose other calls report usage, they count at the arm's median and are named as
ESTIMATED; an arm none of whose calls report usage gets no token cost at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main

TASKS = 6


def _ledger(tmp_path: Path, zero_b: set[int]) -> tuple[Path, Path]:
    rows = []
    for t in range(TASKS):
        rows.append({"run_id": "r", "arm": "a", "task_id": f"t{t}", "session": 0,
                     "role": "sample", "status": "ok", "prompt_tokens": 100,
                     "completion_tokens": 100, "total_tokens": 200, "usage_source": "server",
                     "passed": t % 2 == 0})  # fmt: skip
        used = 0 if t in zero_b else 300
        rows.append({"run_id": "r", "arm": "b", "task_id": f"t{t}", "session": 0,
                     "role": "sample", "status": "ok", "prompt_tokens": used,
                     "completion_tokens": used, "total_tokens": 2 * used,
                     "usage_source": "server", "passed": True})  # fmt: skip
    ledger = tmp_path / "l.jsonl"
    ledger.write_text("".join(json.dumps(r) + "\n" for r in rows))
    comparisons = tmp_path / "c.csv"
    comparisons.write_text(
        "task_id,winner,loser\n" + "".join(f"t{t},b,a\n" for t in range(TASKS)) + "t0,a,b\n"
    )
    return comparisons, ledger


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_zero_usage_calls_count_at_the_arms_median_not_as_free(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comparisons, ledger = _ledger(tmp_path, zero_b={0, 1, 2})
    report = _json(capsys, "elo", str(comparisons), "--ledger", str(ledger),
                   "--intervals", "none", "--format", "json")  # fmt: skip
    players = {p["name"]: p for p in report["players"]}
    # b's calls that reported usage cost 600 each; `tokens` agrees (its mean leaves zeros out)
    tokens = _json(capsys, "tokens", str(ledger), "--format", "json")
    b_tokens = next(g for g in tokens["groups"] if g["name"] == "b")
    assert b_tokens["usage_missing"] == 3 and b_tokens["mean_total_tokens"] == 600
    assert players["b"]["tokens_per_task"] == 600  # not (0+0+0+600+600+600)/6 = 300
    assert players["b"]["tokens_per_success"] == 600
    assert players["a"]["tokens_per_task"] == 200
    said = " | ".join(report["warnings"])
    assert "arm b: 3 ok call(s) without token usage counted at the arm's median 600" in said
    assert "ESTIMATED token counts (the gateway reported no usage) for: b (3 calls, 50%" in said
    assert "3 ok call(s) report zero token usage" in said and "too low" not in said


def test_an_arm_with_no_reported_usage_has_no_token_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comparisons, ledger = _ledger(tmp_path, zero_b=set(range(TASKS)))
    report = _json(capsys, "elo", str(comparisons), "--ledger", str(ledger),
                   "--intervals", "none", "--format", "json")  # fmt: skip
    b = next(p for p in report["players"] if p["name"] == "b")
    assert b["tokens_per_task"] is None and b["tokens_per_success"] is None
    assert b["pass_at_1"] == 1.0  # what it solved still counts
    assert "no token usage in the ledger for: b (token columns left empty)" in report["warnings"]
