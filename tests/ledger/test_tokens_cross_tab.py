"""``tokens --by task,arm`` reads the ledger once by columns, with the cells of the row path.

The table used to read canonical rows (about 14 us each) and build a ledger per arm from them:
3.8 s for 192k rows. The reference below is that row path; both must agree on varied ledgers
(numeric arm names, judge/probe/checkpoint rows, missing and estimated usage, failed calls,
duplicates across files, a torn tail), and each arm's warnings name the arm.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_rating_ledger_outcomes import varied, write

from eloledger.cli import main
from eloledger.ledger.columns import SUMMARY_COLUMNS
from eloledger.ledger.merge import read_rows_many
from eloledger.ledger.reader import read_rows
from eloledger.ledger.tally import tally_ledger

COLUMNS = (*SUMMARY_COLUMNS, "latency_ms", "ts")


def row_path(paths: list[Path]) -> dict:
    """The table as it was computed: canonical rows, one ledger per arm."""
    rows, warnings = read_rows_many(paths)
    per_arm: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("arm") is not None and str(row.get("role") or "sample") != "judge":
            per_arm.setdefault(str(row["arm"]), []).append(row)
    cells: dict[str, dict[str, int]] = {}
    for arm, mine in sorted(per_arm.items()):
        tally, said = tally_ledger(read_rows(mine, columns=COLUMNS), "task", None)
        warnings += [f"arm {arm}: {w}" for w in said]
        for group in tally.groups():
            cells.setdefault(str(group["name"]), {})[arm] = int(group["total_tokens"])
    return {"arms": sorted(per_arm), "tasks": cells, "warnings": warnings}


def cross_tab(paths: list[Path], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["tokens", *map(str, paths), "--by", "task,arm", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def places(warnings: list[str]) -> list[str]:
    return [re.sub(r"\S+:\d+", "FILE:LINE", w) for w in warnings]  # the row path's were synthetic


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_columns_give_the_row_paths_table(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [write(tmp_path / "run.jsonl", varied(seed, 900))]
    got, want = cross_tab(paths, capsys), row_path(paths)
    assert (got["arms"], got["tasks"]) == (want["arms"], want["tasks"])
    assert "7" in got["arms"] and len(got["tasks"]) >= 8
    assert places(got["warnings"]) == places(want["warnings"])
    assert any(w.startswith("arm ") for w in got["warnings"])


def test_several_ledgers_with_duplicates_and_a_torn_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_rows, b_rows = varied(4, 500), varied(5, 400, prefix="b")
    a = write(tmp_path / "a.jsonl", a_rows)
    b = write(tmp_path / "b.jsonl", b_rows + a_rows[:30])
    with b.open("a") as fh:
        fh.write('{"arm": "single", "task_id": "t1", "total_tok')
    got, want = cross_tab([a, b], capsys), row_path([a, b])
    assert (got["arms"], got["tasks"]) == (want["arms"], want["tasks"])
    assert places(got["warnings"]) == places(want["warnings"])
    assert any("30 duplicate" in w for w in got["warnings"])
