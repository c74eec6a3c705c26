"""`curve` reads the ledger by columns, with the same rows' worth of results.

Canonical rows cost about 14 us each (14 s for 1M rows); the light rows of the columnar reader
about a quarter of that. Budget curves read only the fields of ``OUTCOME_COLUMNS``: on varied
ledgers (sessions as 0 and "0", missing usage imputed at the median, agent rows cut by a limit,
scored tasks, duplicates across files, a torn tail) the curves and the warnings are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rating_ledger_outcomes import varied, write

from eloledger.budget.curves import budget_curves
from eloledger.budget.files import load_rows, load_session_rows


def curves_json(rows: list) -> str:
    return json.dumps(budget_curves(rows, bootstrap=40, seed=7).to_dict(), sort_keys=True)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_curves_from_the_columns_equal_the_curves_from_whole_rows(
    tmp_path: Path, seed: int
) -> None:
    rows = [r for r in varied(seed, 900) if r.get("role") != "checkpoint"]
    ledger = write(tmp_path / "run.jsonl", rows)
    whole, warned = load_rows(ledger)
    light, said = load_session_rows(ledger)
    assert said == warned
    assert len(light) == len(whole) and set().union(*light) < set().union(*whole)  # lighter
    assert curves_json(light) == curves_json(whole)


def test_several_ledgers_with_duplicates_and_a_torn_tail(tmp_path: Path) -> None:
    a_rows = [r for r in varied(4, 500) if r.get("role") != "checkpoint"]
    b_rows = [r for r in varied(5, 400, prefix="b") if r.get("role") != "checkpoint"]
    a = write(tmp_path / "a.jsonl", a_rows)
    b = write(tmp_path / "b.jsonl", b_rows + a_rows[:30])  # a shard that repeats 30 calls
    with b.open("a") as fh:
        fh.write('{"arm": "single", "task_id": "t1", "total_tok')
    whole, warned = load_rows([a, b])
    light, said = load_session_rows([a, b])
    assert said == warned and any("30 duplicate" in w for w in said) and len(said) >= 2
    assert curves_json(light) == curves_json(whole)


def test_a_ledger_with_checkpoint_rows_is_read_whole(tmp_path: Path) -> None:
    """The checkpoint fit reads more of each row than the columns hold."""
    ledger = write(tmp_path / "run.jsonl", varied(6, 300))
    assert any(r.get("role") == "checkpoint" for r in load_rows(ledger)[0])
    assert load_session_rows(ledger) == load_rows(ledger)
