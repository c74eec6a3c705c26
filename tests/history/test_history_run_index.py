"""Every ``eloledger run`` (and ``demo``) appends one line to the run index.

Real runs on the embedded simulator (subprocesses, in the test's temporary HOME/XDG folders);
every number in the index is checked against the run's own files computed independently here
(the ledger's rows, the results CSV, the run's JSON) and against ``fairness``/``elo``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eloledger import history

SRC = str(Path(__file__).resolve().parents[2] / "src")
ARMS = """
[[arms]]
name = "base_1"
kind = "single"

[[arms]]
name = "cot_1"
kind = "single"
system = "Think step by step, then end with 'Answer: <number>'."

[[arms]]
name = "base_4"
kind = "best_of_n"
n = 4
select = "verifier"

[[arms]]
name = "cot_4"
kind = "best_of_n"
n = 4
select = "verifier"
system = "Think step by step, then end with 'Answer: <number>'."
"""
GATES = """
[gates]
arms = {old_1 = "base_1", new_1 = "cot_1", old_n = "base_4", new_n = "cot_4"}
max_latency_growth_ratio = 5.0
max_regressions = 0
bootstrap_rounds = 200
"""


def _spec(folder: Path, name: str, *, gates: str = "", seed: int = 3) -> Path:
    spec = folder / f"{name}.toml"
    spec.write_text(
        f'[experiment]\nname = "{name}"\nprofile = "sim"\nmodel = "sim-small"\n'
        f"concurrency = 8\nseed = {seed}\n\n"
        '[tasks]\nsource = "builtin:arith"\nlimit = 12\nshuffle = true\n\n'
        "[retry]\nmax_attempts = 8\nbase_s = 0.01\ncap_s = 0.02\n\n"  # 0.15^8: none fails for good
        '[sim]\nspeed = 50.0\nfault = "500"\nfault_rate = 0.15\n'
        f"{ARMS}{gates}"
    )
    return spec


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eloledger", *args],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip


def _run(spec: Path, ledger: Path) -> dict[str, Any]:
    done = _cli("run", str(spec), "--headless", "--quiet", "--bootstrap", "0",
                "--ledger", str(ledger), "--format", "json")  # fmt: skip
    # a run whose spec's [gates] fail exits 1 and names them (the index line is still written)
    assert done.returncode == 0 or "GATE FAILED" in done.stderr, done.stderr
    assert "run index" not in done.stderr  # no warning: the line was written
    return json.loads(done.stdout)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _expected_arms(ledger: Path) -> dict[str, dict[str, Any]]:
    """Per arm, from the ledger rows and the results CSV alone (not eloledger's readers)."""
    rows = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]
    results = list(csv.DictReader(ledger.with_name(ledger.name.replace(".ledger.jsonl", ".results.csv")).open()))  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for arm in {r["arm"] for r in rows if r.get("role") == "sample"}:
        mine = [r for r in rows if r.get("arm") == arm and r.get("role") in ("sample", "select")]
        ok_ms = [r["latency_ms"] for r in mine if r["status"] == "ok"]
        picks = [r for r in results if r["arm"] == arm]
        out[arm] = {
            "tokens": sum(r.get("total_tokens") or 0 for r in mine),
            "retries": sum(1 for r in mine if r["attempt"] > 1),
            "pass_at_1": sum(r["passed"] in ("1", "True", "true") for r in picks) / len(picks),
            "latency_p95_ms": float(np.percentile(ok_ms, 95)),
            "tasks": len({r["task_id"] for r in rows}),
        }
    return out


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two real runs into one temporary data folder: A with a [gates] comparison, B without."""
    folder = tmp_path_factory.mktemp("runs")
    data = folder / "data"
    saved = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(data)  # module scope: the per-test fixture resets it
    try:
        spec_a, spec_b = _spec(folder, "gated", gates=GATES), _spec(folder, "plain", seed=5)
        ledger_a, ledger_b = folder / "a.ledger.jsonl", folder / "b.ledger.jsonl"
        out_a, out_b = _run(spec_a, ledger_a), _run(spec_b, ledger_b)
    finally:
        if saved is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = saved
    return {
        "data": data, "index": data / "eloledger" / "runs.jsonl",
        "runs": [(spec_a, ledger_a, out_a), (spec_b, ledger_b, out_b)],
    }  # fmt: skip


def test_two_runs_two_lines_with_the_runs_numbers(two_runs: dict[str, Any]) -> None:
    lines = two_runs["index"].read_text().splitlines()
    assert len(lines) == 2
    entries = [json.loads(line) for line in lines]
    for entry, (spec, ledger, out) in zip(entries, two_runs["runs"], strict=True):
        assert entry["run_id"] == out["run"]["run_id"]
        assert entry["spec_sha256"] == _sha(spec)
        assert entry["ledger_sha256"] == [_sha(ledger)] and entry["ledger"] == [str(ledger)]
        expected = _expected_arms(ledger)
        assert entry["tasks"] == 12 == expected["base_1"]["tasks"]
        assert set(entry["arms"]) == set(expected) == {"base_1", "cot_1", "base_4", "cot_4"}
        players = {p["name"]: p for p in out["players"]}
        for arm, want in expected.items():
            got = entry["arms"][arm]
            assert got["tokens"] == want["tokens"] == players[arm]["tokens_per_task"] * 12
            assert got["pass_at_1"] == pytest.approx(want["pass_at_1"])
            assert got["pass_at_1"] == pytest.approx(players[arm]["pass_at_1"])
            assert got["retries"] == want["retries"]
            assert got["latency_p95_ms"] == pytest.approx(want["latency_p95_ms"], abs=0.01)
            assert got["samples_per_session"] == (4 if arm.endswith("_4") else 1)
        assert sum(a["retries"] for a in entry["arms"].values()) == out["run"]["retries"] > 0
    # the fault plan differs by seed, so the two runs' numbers are not the same numbers twice
    assert entries[0]["arms"]["base_4"]["tokens"] != entries[1]["arms"]["base_4"]["tokens"]


def test_verdicts_are_the_runs_fairness_and_knee(two_runs: dict[str, Any]) -> None:
    gated, plain = (json.loads(line) for line in two_runs["index"].read_text().splitlines())
    (spec_a, ledger_a, _), (_, ledger_b, _) = two_runs["runs"]
    fair = _cli("fairness", str(ledger_a), "--gates", str(spec_a), "--format", "json")
    assert fair.returncode in (0, 1), fair.stderr
    record = json.loads(fair.stdout)
    kinds = {v["kind"]: v for v in gated["verdicts"]}
    assert set(kinds) == {"worth_it", "fairness"}
    f = kinds["fairness"]
    assert (f["baseline"], f["candidate"]) == ("base_1", "cot_1")
    assert f["verdict"] == record["verdict"] and f["reason"] == record["reason"]
    assert f["gates_pass"] is (fair.returncode == 0)
    assert f["failed_gates"] == [g["gate"] for g in record["gates"] if not g["pass"]]
    assert f["regressions"] == record["regressions"]
    assert [v["kind"] for v in plain["verdicts"]] == ["worth_it"]  # no [gates]: the knee only
    for entry, ledger in ((gated, ledger_a), (plain, ledger_b)):
        comparisons = ledger.with_name(ledger.name.replace(".ledger.jsonl", ".comparisons.csv"))
        elo = _cli("elo", str(comparisons), "--ledger", str(ledger), "--threshold", "50",
                   "--bootstrap", "0", "--format", "json")  # fmt: skip
        assert elo.returncode == 0, elo.stderr
        shown = json.loads(elo.stdout)
        worth = next(v for v in entry["verdicts"] if v["kind"] == "worth_it")
        assert worth["threshold"] == 50.0 and worth["knee"] == shown["worth_it"]["knee"]
        assert worth["worth_it"] == sorted(p["name"] for p in shown["players"] if p["worth_it"])
        for p in shown["players"]:
            assert entry["arms"][p["name"]]["worth_it"] is p["worth_it"]


def test_history_and_audit_read_the_two_runs(
    two_runs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(two_runs["data"]))
    ids = [out["run"]["run_id"] for _, _, out in two_runs["runs"]]
    where = _cli("history", "--where")
    assert where.stdout.strip() == str(two_runs["index"])
    listed = json.loads(_cli("history", "--format", "json").stdout)["runs"]
    assert sorted(r["run_id"] for r in listed) == sorted(ids)
    table = _cli("history").stdout
    assert all(i[:12] in table for i in ids) and "fairness:" in table
    assert "cot_1 vs base_1" in table and table.count(" vs ") == 1
    audit = json.loads(_cli("audit", "--by", "run", "--format", "json").stdout)["periods"]
    assert len(audit) == 2 and all(p["runs"] == 1 for p in audit)
    by_id = {e["run_id"]: e for e in listed}
    for period in audit:
        arms = by_id[period["period"]]["arms"]
        n1 = [arms[a]["pass_at_1"] for a in ("base_1", "cot_1")]
        assert period["pass_at_1_n1"] == pytest.approx(sum(n1) / 2)
        assert period["bestofn_share"] == 0.5
        assert period["retries"] == sum(a["retries"] for a in arms.values())
    week = json.loads(_cli("audit", "--format", "json").stdout)["periods"]
    assert len(week) == 1 and week[0]["runs"] == 2


def test_a_broken_index_is_a_warning_and_the_run_still_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    spec = _spec(tmp_path, "blocked")
    done = _cli("run", str(spec), "--headless", "--quiet", "--bootstrap", "0",
                "--ledger", str(tmp_path / "l.ledger.jsonl"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "run index" in line]
    assert len(warning) == 1 and warning[0].startswith("eloledger: warning: run index")
    assert "Traceback" not in done.stderr and "base_4" in done.stdout  # the table is there


def test_history_add_of_a_runs_ledger_is_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexing a run's ledger again (relative path, from its folder) replaces the run's line
    instead of listing the run twice, and finds the comparisons beside it (same knee)."""
    spec = _spec(tmp_path, "again")
    _run(spec, tmp_path / "again.ledger.jsonl")
    (first,) = history.read_index()
    monkeypatch.chdir(tmp_path)
    assert _cli("history", "--add", "again.ledger.jsonl").returncode == 0
    assert len(history.index_path().read_text().splitlines()) == 2  # appended, never rewritten
    (again,) = history.read_index()
    assert again["run_id"] == first["run_id"] and again["ledger"] == first["ledger"]
    assert again["arms"] == first["arms"] and again["verdicts"] == first["verdicts"]


def test_the_demo_appends_its_run(demo_run) -> None:
    out = demo_run.report  # the session's demo, run in its own HOME (conftest.demo_run)
    entries = history.read_index(demo_run.folder / "home" / "xdg_data_home" / "eloledger" / "runs.jsonl")
    assert [e["run_id"] for e in entries] == [out["run"]["run_id"]]
    from eloledger.runner.demo import demo_spec_path

    assert entries[0]["spec_sha256"] == _sha(Path(demo_spec_path()))
    assert entries[0]["arms"].keys() == {a["arm"] for a in out["arms"]}
    assert entries[0]["verdicts"][0]["kind"] == "worth_it"


def test_a_spec_gate_naming_no_arm_fails_before_a_call(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "typo", gates=GATES.replace('new_1 = "cot_1"', 'new_1 = "cot1"'))
    ledger = tmp_path / "typo.ledger.jsonl"
    done = _cli("run", str(spec), "--headless", "--quiet", "--ledger", str(ledger))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "new_1 = 'cot1' is not an arm" in done.stderr
    assert str(spec) in done.stderr and not ledger.exists()
    assert not history.index_path().exists()


def test_concurrent_appends_stay_whole_lines(tmp_path: Path) -> None:
    """Writers at once (threads here, processes in real life) never cut or merge lines."""
    index = tmp_path / "runs.jsonl"
    big = {"run_id": None, "time_utc": "2026-12-01T00:00:00+00:00", "arms": {}, "pad": "x" * 70_000}

    def writer(k: int) -> None:
        for i in range(20):
            history.append_entry({**big, "n": [k, i]}, index)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = index.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 121
    assert sorted(tuple(json.loads(line)["n"]) for line in lines[:-1]) == [
        (k, i) for k in range(6) for i in range(20)
    ]


def test_a_torn_last_line_neither_glues_nor_breaks_the_index(tmp_path: Path) -> None:
    index = tmp_path / "runs.jsonl"
    good = {"run_id": "r1", "time_utc": "2026-12-01T00:00:00+00:00", "arms": {}, "ledger": []}
    index.write_text(json.dumps(good) + '\n{"run_id": "r2", "ti')  # a crash mid-write
    history.append_entry({**good, "run_id": "r3"}, index)
    assert [e["run_id"] for e in history.read_index(index)] == ["r1", "r3"]


def test_a_run_indexed_again_is_listed_once(tmp_path: Path) -> None:
    """--resume (or history --add of the same ledger) writes a newer line for the same run."""
    index = tmp_path / "runs.jsonl"
    old = {"run_id": "r1", "time_utc": "2026-12-01T00:00:00+00:00", "arms": {"a": {"tokens": 1}}, "ledger": ["/l"]}  # fmt: skip
    history.append_entry(old, index)
    history.append_entry({**old, "time_utc": "2026-12-01T01:00:00+00:00", "arms": {"a": {"tokens": 9}}}, index)  # fmt: skip
    history.append_entry({**old, "ledger": ["/other-shard"]}, index)  # another shard: its own
    runs = history.read_index(index)
    assert len(runs) == 2
    assert [r["arms"]["a"]["tokens"] for r in runs if r["ledger"] == ["/l"]] == [9]
