"""The guides' per-arm one-liners over a real run's ledger see no judge pair as an arm.

The guides sum a ledger's tokens per arm with ``jq`` and ``awk`` on the ``arm`` field. A run
with an LLM judge (matches between arms and a knockout inside a best-of-n arm) writes its judge
calls with ``arm = "judge"`` and what they compared in ``judged`` (with the guides' ``winner`` and ``opponent`` on a match between arms),
so those sums show the
experiment's arms plus one ``judge`` line, and each arm's sum is what ``eloledger tokens`` bills
it. Readers of judge rows (resume, the verdict count of ``elo --ledger``, the duplicate finder
of ``doctor --ledger``) key them by ``judged``, and still read ledgers written before, where
the label stood in ``arm``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from row_contract import assert_reads_back_as_written

from eloledger.cli import main
from eloledger.judges.llm import parse_verdict
from eloledger.judges.verdicts import verdict_counts
from eloledger.ledger.dedupe import DuplicateFinder
from eloledger.ledger.schema import undocumented
from eloledger.runner.run import run_experiment
from eloledger.runner.spec import parse_spec

SPEC = """\
[experiment]
name = "guide"
profile = "sim"
concurrency = 16
seed = 3

[sim]
speed = 60

[tasks]
source = "builtin:arith"
limit = 6

[judge]
kind = "llm"

[[arms]]
name = "baseline"
kind = "single"

[[arms]]
name = "cot"
kind = "single"
system = "Think step by step, then end with 'Answer: <number>'."

[[arms]]
name = "pick"
kind = "best_of_n"
n = 3
select = "judge"
"""

ARMS = {"baseline", "cot", "pick"}
# the guide's one-liner (as bench/bench_ledger.py runs it), and the same split on tabs only
GUIDE_AWK = "jq -r '[.arm, .total_tokens] | @tsv' {path} | awk '{{s[$1]+=$2}} END {{for (a in s) printf \"%s\\t%.0f\\n\", a, s[a]}}'"  # noqa: E501
TAB_AWK = "jq -r '[.arm, .total_tokens] | @tsv' {path} | awk -F'\\t' '{{s[$1]+=$2}} END {{for (a in s) printf \"%s\\t%.0f\\n\", a, s[a]}}'"  # noqa: E501
GUIDE_JQ = "jq -s 'group_by(.arm) | map({{(.[0].arm): (map(.total_tokens) | add)}}) | add' {path}"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real run on the embedded simulator (about 2 s): 6 tasks, 3 arms, an LLM judge."""
    folder = tmp_path_factory.mktemp("run")
    spec_path = folder / "spec.toml"
    spec_path.write_text(SPEC)
    spec = parse_spec(SPEC, path=spec_path, ledger=folder / "guide.jsonl")
    result = asyncio.run(run_experiment(spec))
    assert result.stopped == "completed" and result.judge_calls > 0
    return spec.ledger


def _rows(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _shell_sums(command: str) -> dict[str, int]:
    done = subprocess.run(command, shell=True, capture_output=True, text=True, check=True)
    return {a: int(n) for a, n in (line.split("\t") for line in done.stdout.splitlines())}


def _billed(ledger: Path, capsys: pytest.CaptureFixture) -> tuple[dict[str, int], int]:
    assert main(["tokens", str(ledger), "--by", "arm", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    return {g["name"]: g["total_tokens"] for g in data["groups"]}, data["judge"]["total_tokens"]


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
@pytest.mark.parametrize("one_liner", [GUIDE_AWK, TAB_AWK], ids=["awk", "awk-tabs"])
def test_guide_awk_sums_show_the_arms_and_one_judge_line(
    ledger: Path, one_liner: str, capsys: pytest.CaptureFixture
) -> None:
    sums = _shell_sums(one_liner.format(path=ledger))
    assert set(sums) == ARMS | {"judge"}
    assert not [name for name in sums if " vs " in name or name.isdigit()]
    arms, judge = _billed(ledger, capsys)
    # each arm's sum is its own calls only: the knockout inside "pick" is the judge's cost
    assert {a: sums[a] for a in ARMS} == arms
    assert sums["judge"] == judge > 0


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_guide_jq_group_by_arm(ledger: Path, capsys: pytest.CaptureFixture) -> None:
    done = subprocess.run(
        GUIDE_JQ.format(path=ledger), shell=True, capture_output=True, text=True, check=True
    )
    sums = json.loads(done.stdout)
    arms, judge = _billed(ledger, capsys)
    assert sums == {**arms, "judge": judge}


def test_judge_rows_name_what_they_compared(ledger: Path) -> None:
    judges = [r for r in _rows(ledger) if r["role"] == "judge"]
    assert {r["arm"] for r in judges} == {"judge"}
    pairs = {"baseline vs cot", "baseline vs pick", "cot vs pick"}
    assert {r["judged"] for r in judges} == pairs | {"pick"}  # "pick": its own knockout
    tasks = {r["task_id"] for r in _rows(ledger) if r["role"] == "sample"}
    assert len(tasks) == 6
    for label in pairs:  # every task, both orders
        mine = sorted((r["task_id"], r["round"]) for r in judges if r["judged"] == label)
        assert mine == sorted((t, order) for t in tasks for order in (0, 1))
    # the guides' winner/opponent on a match between arms, from the verdict and the order shown
    decided = 0
    for r in judges:
        verdict = parse_verdict(r["content"]) if r["status"] == "ok" else None
        if r["judged"] == "pick" or verdict in (None, 0.5):
            assert "winner" not in r and "opponent" not in r
            continue
        first, second = r["judged"].split(" vs ")
        shown_a, shown_b = (first, second) if r["round"] == 0 else (second, first)
        assert (r["winner"], r["opponent"]) == ((shown_a, shown_b) if verdict == 1.0 else (shown_b, shown_a))
        decided += 1
    assert decided > 0


def test_the_runs_rows_judge_rows_too_are_all_in_the_ledger_reference(ledger: Path) -> None:
    rows = _rows(ledger)
    assert {r["role"] for r in rows} >= {"sample", "judge"}
    assert not undocumented(rows)
    assert_reads_back_as_written(ledger)  # of the types LedgerRow declares, read as written


def test_no_two_judge_calls_share_an_identity(ledger: Path) -> None:
    """Judge calls of different pairs share task, session, match and order: ``judged`` tells
    them apart, so neither a merge nor ``doctor --ledger`` calls them duplicates."""
    finder = DuplicateFinder(ids_within_file=True)
    for n, line in enumerate(ledger.read_bytes().splitlines(), 1):
        assert finder.repeats(f"{ledger}:{n}", line, orjson.loads(line)) is None
    assert main(["tokens", str(ledger), str(ledger), "--format", "json"]) == 0  # merged twice


def test_verdict_count_reads_both_shapes(tmp_path: Path, ledger: Path) -> None:
    """``elo --ledger``'s verdict count labels a judge call by what it compared, in this
    shape and in the older one (the label in ``arm``)."""
    rows = [r for r in _rows(ledger) if r["role"] == "judge"]
    lost = [{**r, "content": "no idea"} for r in rows]  # no VERDICT line: no verdict
    old = [{k: v for k, v in {**r, "arm": r["judged"]}.items() if k != "judged"} for r in lost]
    counts = []
    for name, shape in (("new", lost), ("old", old)):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in shape))
        calls, missing, _ = verdict_counts(path)
        counts.append((calls, dict(missing)))
    assert counts[0] == counts[1]
    calls, missing = counts[0]
    assert calls == len(rows) and set(missing) == {"baseline vs cot", "baseline vs pick",
                                                   "cot vs pick", "pick"}  # fmt: skip


def test_an_arm_named_judge_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    text = SPEC.replace('name = "cot"', 'name = "judge"')
    path = tmp_path / "spec.toml"
    path.write_text(text)
    assert main(["run", str(path), "--headless"]) == 2
    err = capsys.readouterr().err
    assert "spec.toml:" in err and "arm name 'judge' is the judge's" in err and "rename" in err
    assert not list(tmp_path.glob("*.jsonl"))


def test_history_audit_and_elo_read_the_arms_only(
    ledger: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["history", "--add", str(ledger)]) == 0
    capsys.readouterr()
    assert main(["history", "--format", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert set(run["arms"]) == ARMS
    assert main(["audit", "--by", "run", "--format", "json"]) == 0
    (period,) = json.loads(capsys.readouterr().out)["periods"]
    assert period["bestofn_share"] == pytest.approx(1 / 3)  # pick, of three arms
    comparisons = ledger.with_name("guide.comparisons.csv")
    assert main(["elo", str(comparisons), "--ledger", str(ledger), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {p["name"] for p in report["players"]} == ARMS
    assert all(p["tokens_per_task"] for p in report["players"])
