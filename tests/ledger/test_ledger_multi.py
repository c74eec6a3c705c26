"""Several ledgers read as one (shards of a run): tokens, elo --ledger, curve, fairness agree
with the single ledger they were split from, and an overlap counts once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from summary_oracle import summarize

from eloledger.budget.outcomes import ledger_outcomes
from eloledger.budget.sampling_sim import sampling_sessions
from eloledger.cli import main
from eloledger.errors import UserError
from eloledger.ledger import LedgerWriter
from eloledger.ledger.merge import read_ledgers, read_rows_many
from eloledger.ledger.sources import expand_ledgers


@pytest.fixture
def whole(tmp_path: Path) -> Path:
    path = tmp_path / "whole" / "ledger.jsonl"
    rows = sampling_sessions(
        arms=("iid", "stall"), tasks=8, sessions=3, samples=6, stall_after={"stall": 2}, seed=1
    )
    path.parent.mkdir()
    with LedgerWriter(path) as writer:
        for row in rows:
            writer.append({"run_id": "r1", **row})
    return path


def _shard(whole: Path, folder: Path, n: int, overlap: int = 0) -> list[Path]:
    """Split ``whole`` into ``n`` shard files by line; the last ``overlap`` lines of each shard
    are also written at the start of the next one (a unit run by two shards)."""
    lines = whole.read_bytes().splitlines(keepends=True)
    folder.mkdir()
    size = -(-len(lines) // n)
    paths = []
    for i in range(n):
        start = max(0, i * size - (overlap if i else 0))
        path = folder / f"shard-{i}.jsonl"
        path.write_bytes(b"".join(lines[start : (i + 1) * size]))
        paths.append(path)
    (folder / "shard-0.comparisons.csv").write_text("not a ledger\n")
    return paths


def test_shards_sum_like_the_whole(whole: Path, tmp_path: Path) -> None:
    shards = _shard(whole, tmp_path / "shards", 3)
    one = summarize(read_ledgers(whole))
    assert summarize(read_ledgers(shards)) == one
    assert summarize(read_ledgers(tmp_path / "shards")) == one  # the folder (csv left out)
    assert summarize(read_ledgers(str(tmp_path / "shards" / "shard-*.jsonl"))) == one
    assert ledger_outcomes(shards)[0] == ledger_outcomes(whole)[0]


def test_overlapping_shards_count_once_and_name_both_files(whole: Path, tmp_path: Path) -> None:
    shards = _shard(whole, tmp_path / "shards", 3, overlap=2)
    warnings: list[str] = []
    merged = read_ledgers(shards, warn=warnings.append)
    assert summarize(merged) == summarize(read_ledgers(whole))
    (message,) = [w for w in warnings if "duplicate" in w]
    assert message.startswith("4 duplicate rows")
    assert f"{shards[1]}:1 repeats {shards[0]}:" in message
    rows, row_warnings = read_rows_many(shards)
    assert len(rows) == len(whole.read_bytes().splitlines())
    assert any("4 duplicate rows" in w for w in row_warnings)


def test_rows_of_a_merged_ledger_skip_the_duplicates(whole: Path, tmp_path: Path) -> None:
    shards = _shard(whole, tmp_path / "shards", 2, overlap=3)
    merged = read_ledgers(shards)
    assert len(merged.rows()) == len(merged) == len(whole.read_bytes().splitlines())


def test_cli_curve_fairness_and_elo_accept_several_ledgers(
    whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shard(whole, tmp_path / "shards", 2, overlap=1)
    assert main(["curve", str(whole), "--bootstrap", "10", "--format", "json"]) == 0
    single = json.loads(capsys.readouterr().out)
    assert main(["curve", *map(str, shards), "--bootstrap", "10", "--format", "json"]) == 0
    captured = capsys.readouterr()
    merged_curve = json.loads(captured.out)
    assert merged_curve["arms"] == single["arms"]
    assert any("1 duplicate row records a call" in w for w in merged_curve["warnings"])

    fair = ["--old-1", "iid", "--new-1", "stall", "--old-n", "iid", "--new-n", "stall"]
    fair += ["--bootstrap", "20", "--format", "json"]
    assert main(["fairness", str(whole), *fair]) in (0, 1)
    one = json.loads(capsys.readouterr().out)
    assert main(["fairness", str(tmp_path / "shards"), *fair]) in (0, 1)
    both = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in both["ledger"]["files"]] == [str(p) for p in shards]
    assert both["ledger"]["rows"] == one["ledger"]["rows"]

    comps = tmp_path / "c.csv"
    comps.write_text("task_id,a,b,outcome\ntask000,iid,stall,1\ntask001,iid,stall,0\n")
    args = ["elo", str(comps), "--bootstrap", "0", "--format", "json"]
    assert main([*args, "--ledger", str(whole)]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main([*args, "--ledger", str(shards[0]), "--ledger", str(shards[1])]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["players"] == alone["players"]
    assert any("duplicate" in w for w in merged["warnings"])


def test_tokens_cli_merges_a_glob_in_a_real_process(whole: Path, tmp_path: Path) -> None:
    _shard(whole, tmp_path / "shards", 3, overlap=1)
    run = [sys.executable, "-m", "eloledger", "tokens", "--format", "json"]
    one = subprocess.run([*run, str(whole)], capture_output=True, text=True, timeout=60)
    many = subprocess.run(
        [*run, str(tmp_path / "shards" / "*.jsonl")], capture_output=True, text=True, timeout=60
    )
    assert many.returncode == 0, many.stderr
    assert json.loads(many.stdout)["groups"] == json.loads(one.stdout)["groups"]


def test_expand_refuses_what_matches_nothing(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no file matches"):
        expand_ledgers([str(tmp_path / "x-*.jsonl")])
    with pytest.raises(UserError, match="no such ledger file"):
        expand_ledgers([tmp_path / "missing.jsonl"])
    a = tmp_path / "a.jsonl"
    a.write_text("{}\n")
    assert expand_ledgers([a, str(a), tmp_path]) == [a]  # each file once


def test_a_folder_lists_the_ledgers_path_glob_finds_each_file_once(tmp_path: Path) -> None:
    """The folder's listing (one ``scandir``, no ``stat`` per file) finds what ``Path.glob``
    finds: dotfiles, links to files (each file once, however it is named), never a folder
    named like a ledger, a side file, or another case of the suffix on a case-sensitive
    system."""
    folder, elsewhere = tmp_path / "runs", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    for name in ("b.jsonl", ".hidden.jsonl", "a.jsonl", "x.comparisons.jsonl", "results.jsonl"):
        (folder / name).write_text('{"arm": "a"}\n')
    (folder / "upper.JSONL").write_text('{"arm": "a"}\n')
    (folder / "dir.jsonl").mkdir()
    (elsewhere / "far.jsonl").write_text('{"arm": "b"}\n')
    (folder / "c-link.jsonl").symlink_to(elsewhere / "far.jsonl")
    (folder / "z-same.jsonl").symlink_to(folder / "a.jsonl")  # a.jsonl again: read once
    (folder / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    globbed = sorted(
        p for p in folder.glob("*.jsonl") if p.is_file() and not p.name.endswith("results.jsonl")
    )
    globbed = [p for p in globbed if not p.name.endswith(".comparisons.jsonl")]
    seen: set[Path] = set()
    once = [p for p in globbed if not (p.resolve() in seen or seen.add(p.resolve()))]
    found = expand_ledgers([folder, elsewhere / "far.jsonl"])
    assert found == once
    assert [p.name for p in found] == [".hidden.jsonl", "a.jsonl", "b.jsonl", "c-link.jsonl"]


def test_a_folder_of_many_ledgers_is_listed_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file once, found by its resolved path kept in a set: every new file used to
    resolve every file listed before it (8,000 small ledgers: minutes before any was read)."""
    for k in range(300):
        (tmp_path / f"s{k:03d}.jsonl").write_text('{"arm": "a"}\n')
    resolved = []
    real = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda self, *a: resolved.append(self) or real(self, *a))
    found = expand_ledgers([tmp_path, tmp_path / "s007.jsonl"])
    assert [p.name for p in found] == [f"s{k:03d}.jsonl" for k in range(300)]
    assert len(resolved) <= 2 * 301
