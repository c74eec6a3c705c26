"""Fairness gates on ledgers with known truth (exit 0 / 1 / 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.ledger import LedgerWriter

ARGS = ["--old-1", "base_1", "--new-1", "cand_1", "--old-n", "base_4", "--new-n", "cand_4"]
GATES = """\
[gates]
min_same_budget_gain = 0.0
max_token_growth_ratio = 1.10
max_latency_growth_ratio = 1.20
max_regressions = 0
bootstrap_rounds = 300
"""


def build(
    path: Path,
    *,
    tasks: int = 120,
    base_solves: set[int],
    cand_solves: set[int],
    cand_latency: float = 1000.0,
    tags: dict[int, str] | None = None,
    split: dict[int, str] | None = None,
    labels_on_rows: bool = True,
) -> Path:
    """Four arms; base_1/cand_1 solve exactly the given tasks (one session each); the N-way
    arms (4 samples) solve the same tasks with their first sample."""
    with LedgerWriter(path) as writer:
        for arm, solves, n, latency in (
            ("base_1", base_solves, 1, 1000.0),
            ("cand_1", cand_solves, 1, cand_latency),
            ("base_4", base_solves, 4, 1000.0),
            ("cand_4", cand_solves, 4, cand_latency),
        ):
            for t in range(tasks):
                for s in range(n):
                    row = {
                        "run_id": "r1", "task_id": f"t{t}", "arm": arm, "session": "0",
                        "sample": s, "role": "sample", "model": f"m-{arm[:4]}",
                        "base_url": "http://127.0.0.1:9/v1", "prompt_tokens": 100,
                        "completion_tokens": 100, "latency_ms": latency * (1 + (t % 7) / 100),
                        "passed": t in solves,
                    }  # fmt: skip
                    if labels_on_rows and tags:
                        row["tags"] = [tags.get(t, "misc")]
                    if labels_on_rows and split:
                        row["split"] = split[t]
                    writer.append(row)
    return path


@pytest.fixture
def gate_file(tmp_path: Path) -> Path:
    path = tmp_path / "gates.toml"
    path.write_text(GATES)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["fairness", *argv, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_clean_candidate_passes_with_the_guide_keys(
    tmp_path: Path, gate_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = build(tmp_path / "l.jsonl", base_solves=set(range(40)), cand_solves=set(range(90)))
    code, rec = run(capsys, str(ledger), *ARGS, "--gates", str(gate_file))
    assert code == 0
    assert rec["verdict"] == "real_evolution"
    for key in ("candidate_id", "baseline_id", "same_budget", "bestofn_off", "bestofn_on",
                "verdict", "reason", "gates", "regressions", "strata", "provenance"):  # fmt: skip
        assert key in rec, key
    sb = rec["same_budget"]
    assert set(sb) >= {"budget", "baseline_pass", "candidate_pass", "delta", "ci95",
                       "baseline_tokens_per_success", "candidate_tokens_per_success"}  # fmt: skip
    assert sb["baseline_pass"] == pytest.approx(40 / 120)
    assert sb["delta"] == pytest.approx(50 / 120)
    assert sb["baseline_tokens_per_success"] == pytest.approx(120 * 200 / 40)
    assert rec["bestofn_on"]["n"] == 4 and rec["bestofn_on"]["total_tokens_ratio"] == 1.0
    assert rec["inputs"]["bootstrap"] == 300  # from the gate file
    assert [g["gate"] for g in rec["gates"]] == [
        "min_same_budget_gain", "max_token_growth_ratio", "max_latency_growth_ratio",
        "max_regressions",
    ]  # fmt: skip
    assert all(g["pass"] for g in rec["gates"]) and rec["regressions"] == []
    assert rec["provenance"]["spec_sha256"] and len(rec["provenance"]["ledger_sha256"]) == 1


def test_slower_candidate_fails_the_latency_gate(
    tmp_path: Path, gate_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = build(
        tmp_path / "l.jsonl", base_solves=set(range(40)), cand_solves=set(range(90)),
        cand_latency=1600.0,
    )  # fmt: skip
    code, rec = run(capsys, str(ledger), *ARGS, "--gates", str(gate_file))
    assert code == 1
    assert rec["verdict"] == "real_evolution"  # better at n=1 ...
    gates = {g["gate"]: g for g in rec["gates"]}
    assert not gates["max_latency_growth_ratio"]["pass"]  # ... but 1.6x slower
    assert gates["max_latency_growth_ratio"]["value"] == pytest.approx(1.6, abs=0.02)
    assert all(g["pass"] for name, g in gates.items() if name != "max_latency_growth_ratio")
    # the table says so too, and exits 1
    assert main(["fairness", str(ledger), *ARGS, "--gates", str(gate_file), "--format", "table"]) == 1  # fmt: skip
    out = capsys.readouterr().out
    assert "max_latency_growth_ratio" in out and "FAIL" in out and "GATE FAILED" in out


def test_hidden_regressions_fail_and_are_named_with_their_stratum(
    tmp_path: Path, gate_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tags = {t: ("regex" if t < 10 else "math") for t in range(120)}
    ledger = build(
        tmp_path / "l.jsonl", base_solves=set(range(40)), cand_solves=set(range(10, 100)),
        tags=tags,
    )  # fmt: skip
    code, rec = run(capsys, str(ledger), *ARGS, "--gates", str(gate_file))
    assert code == 1
    assert rec["same_budget"]["delta"] == pytest.approx(50 / 120)  # the average gains
    assert sorted(rec["regressions"]) == sorted(f"t{t}" for t in range(10))
    assert set(map(tuple, rec["regression_strata"].values())) == {("regex",)}
    assert rec["strata"]["regex"]["delta"] == -1.0 and rec["strata"]["regex"]["n"] == 10
    failed = [g for g in rec["gates"] if not g["pass"]]
    assert [g["gate"] for g in failed] == ["max_regressions"]
    assert "t0 (regex)" in failed[0]["note"]
    assert main(["fairness", str(ledger), *ARGS, "--gates", str(gate_file), "--format", "table"]) == 1  # fmt: skip
    out = capsys.readouterr().out
    assert "regressed (solved by the baseline, failed by the candidate): t0 (regex)" in out
    assert "t9 (regex)" in out and "t10 " not in out


def test_gain_only_on_the_tuned_split_is_not_real_on_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    split = {t: ("val" if t < 60 else "test") for t in range(120)}
    base = set(range(0, 120, 3))  # a third of each split
    cand = base | set(range(0, 60))  # extra wins only on val
    ledger = build(tmp_path / "l.jsonl", base_solves=base, cand_solves=cand, split=split)
    spec = tmp_path / "spec.toml"
    spec.write_text('[tasks]\ntuned_on = "val"\n\n' + GATES)
    code, rec = run(capsys, str(ledger), *ARGS, "--gates", str(spec), "--split", "test")
    assert rec["verdict"] != "real_evolution" and code == 1
    assert rec["tasks"]["used"] == 60 and "tuned_on_warning" not in rec
    code, rec = run(capsys, str(ledger), *ARGS, "--gates", str(spec), "--split", "val")
    assert rec["verdict"] == "real_evolution"
    assert "TUNED-ON SPLIT" in rec["tuned_on_warning"] and "tuned-on" in rec["reason"]


def test_tasks_file_attaches_split_and_tags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    split = {t: ("val" if t < 60 else "test") for t in range(120)}
    ledger = build(
        tmp_path / "l.jsonl", base_solves=set(range(40)), cand_solves=set(range(90)),
        split=split, tags={t: "math" for t in range(120)}, labels_on_rows=False,
    )  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"task_id": f"t{t}", "prompt": "p", "split": split[t], "tags": ["math"]}) + "\n"
        for t in range(120)
    ))  # fmt: skip
    code, rec = run(capsys, str(ledger), *ARGS, "--split", "test", "--tasks", str(tasks), "--bootstrap", "100")  # fmt: skip
    assert code == 0 and rec["tasks"]["used"] == 60
    assert rec["strata"]["math"]["n"] == 60
    assert rec["provenance"]["task_set_basis"] == "tasks file"
    assert main(["fairness", str(ledger), *ARGS, "--split", "test"]) == 2  # no split on rows
    assert "--tasks" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[gates]\nmax_latency = 1.2\n", "gates.max_latency: unknown gate"),
        ("[gates]\nmax_regressions = -1\n", "gates.max_regressions"),
        ("[gates]\nmax_token_growth_ratio = 'x'\n", "gates.max_token_growth_ratio"),
        ("[gates\n", "not valid TOML"),
        ("[arms.a]\nn = 1\n", "no [gates] table"),
    ],
)
def test_bad_gate_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str
) -> None:
    ledger = build(tmp_path / "l.jsonl", tasks=10, base_solves={1}, cand_solves={1, 2})
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    assert main(["fairness", str(ledger), *ARGS, "--gates", str(bad)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "bad.toml" in err and "Traceback" not in err


def test_memory_entry(tmp_path: Path, gate_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = build(tmp_path / "l.jsonl", base_solves=set(range(40)), cand_solves=set(range(90)))
    code, entry = run(capsys, str(ledger), *ARGS, "--gates", str(gate_file), "--record", "memory")
    assert code == 0
    assert entry["type"] == "skill_candidate" and entry["model"] == "m-cand"
    assert entry["source_run"] == ["r1"] and entry["base_url"] == "http://127.0.0.1:9/v1"
    assert entry["verdict"] == "real_evolution" and entry["n"] == 1 and entry["budget"] == 200
    assert entry["decision"] == "promote_to_skill" and entry["promote_to_skill"] is True
    assert entry["same_budget_delta"] == pytest.approx(50 / 120) == entry["bestofn_off_delta"]
    assert entry["memory_id"].startswith("mem-") and entry["bestofn_ratio"] == 1.0
    slow = build(
        tmp_path / "s.jsonl", base_solves=set(range(40)), cand_solves=set(range(90)),
        cand_latency=1600.0,
    )  # fmt: skip
    code, entry = run(capsys, str(slow), *ARGS, "--gates", str(gate_file), "--record", "memory")
    assert code == 1 and entry["type"] == "negative_pattern"
    # a real evolution held back by a gate: the record says the gate, not "it improves"
    assert entry["decision"] == "do_not_promote" and entry["verdict"] == "gate_failed"
    assert entry["fairness_verdict"] == "real_evolution"
    assert entry["reason"].startswith("not promoted: gate max_latency_growth_ratio fails")
    assert entry["failed_gates"] == ["max_latency_growth_ratio"]


def test_a_gate_without_data_fails_not_crashes(
    tmp_path: Path, gate_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = build(tmp_path / "l.jsonl", base_solves=set(range(40)), cand_solves=set(range(90)))
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(
        json.dumps({k: v for k, v in json.loads(line).items() if k != "latency_ms"}) + "\n"
        for line in ledger.read_text().splitlines()
    ))  # fmt: skip
    code, rec = run(capsys, str(bare), *ARGS, "--gates", str(gate_file))
    gate = next(g for g in rec["gates"] if g["gate"] == "max_latency_growth_ratio")
    assert code == 1 and gate["value"] is None and gate["pass"] is False
    assert main(["fairness", str(bare), *ARGS, "--gates", str(gate_file), "--format", "table"]) == 1
    assert "FAIL" in capsys.readouterr().out
