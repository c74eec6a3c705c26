"""The Elo table's one column definition (``report.elo_columns``): titles, cell texts and the
order columns give way on a narrow screen, as the CLI's renderer applies them; and a run's
anchor (``elo_of_run``), the rule `eloledger run`/`demo` and the TUI after a run share."""

from __future__ import annotations

import argparse
import dataclasses
import re
from importlib import resources
from pathlib import Path

import pytest
from rich.cells import cell_len

from eloledger.cli.elo_cmd import render_text
from eloledger.errors import UserError
from eloledger.report.elo_columns import (
    BASE_COLUMNS,
    ELO_COST_COLUMNS,
    LC_COLUMNS,
    EloColumn,
    cell_text,
    elo_columns,
    give_way_order,
    row_texts,
    shown_record,
)
from eloledger.report.elo_files import elo_of_files, elo_of_run
from eloledger.runner.demo import demo_spec_path
from eloledger.runner.spec import load_spec
from eloledger.tables import render_table

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))
EVERY = BASE_COLUMNS + LC_COLUMNS + ELO_COST_COLUMNS


@pytest.fixture(scope="module")
def example():
    """The shipped example's report (costs, latency-free, sandwich intervals)."""
    return elo_of_files(str(EXAMPLES / "comparisons.csv"), str(EXAMPLES / "ledger.jsonl"))


def not_shown(text: str) -> list[str]:
    """The titles the CLI's table names as left out, without '(320 in every row)'."""
    flat = " ".join(text.split())  # the note wraps at the table's width
    found = re.search(r"\(not shown to fit \d+ columns: (.*?); --wide shows all\)", flat)
    if found is None:
        return []
    parts = found.group(1).split(", ")
    return [re.sub(r" \((.*) in every row\)$", "", part) for part in parts]


def test_every_column_has_its_own_key_title_and_drop_rank() -> None:
    assert len({c.key for c in EVERY}) == len(EVERY)
    assert len({c.title for c in EVERY}) == len(EVERY)
    ranks = [c.drop for c in EVERY if c.drop]
    assert len(set(ranks)) == len(ranks)  # one order, no ties to break by position
    assert [c.key for c in BASE_COLUMNS[:3]] == ["name", "elo", "ci"]
    assert all(c.drop == 0 for c in BASE_COLUMNS[:3])  # the player, its Elo and interval stay


def test_the_cli_table_prints_the_definitions_titles(example) -> None:
    args = argparse.Namespace(format="table", wide=True, seed=0)
    header = render_text(example, args).splitlines()[0]
    assert re.split(r" {2,}", header.strip()) == [c.title for c in elo_columns(example)]
    wanted = [c.key for c in BASE_COLUMNS + ELO_COST_COLUMNS if c.key != "worth_it"]
    assert [c.key for c in elo_columns(example)] == wanted  # costs, timed, no threshold
    assert elo_columns(example, with_worth_it=True)[-1].key == "worth_it"


def test_a_cell_reads_the_same_whatever_asks() -> None:
    record = {
        "name": "a\x1b[31m",
        "elo": 1234.56,
        "ci_low": 1200.4,
        "ci_high": float("inf"),
        "rank_low": 1,
        "rank_high": 2,
        "games": 320,
        "tokens_per_task": 6418.2,
        "delta_elo_per_1k": 65.1349,
        "dominated": True,
        "pass_at_1": None,
        "worth_it": False,
    }
    by_key = {c.key: c for c in EVERY}
    expected = {
        "name": "a\\e[31m",  # a name from a file never reaches the terminal raw
        "elo": "1234.6",
        "ci": "1200..+inf",
        "rank_ci": "1..2",
        "games": "320",
        "tokens_per_task": "6418",
        "delta_elo_per_1k": "65.13",
        "dominated": "yes",
        "pass_at_1": "",
        "worth_it": "no",
    }
    assert {k: cell_text(record, by_key[k]) for k in expected} == expected
    assert row_texts([record], [by_key[k] for k in expected]) == [list(expected.values())]
    assert shown_record(record)["ci"] == "1200..+inf" and record["worth_it"] is False


def test_give_way_order_puts_silent_columns_first_then_the_ranks() -> None:
    columns = [
        EloColumn("name", "player"),
        EloColumn("a", "a", drop=2),
        EloColumn("z", "z"),  # always shown, all zero: says nothing
        EloColumn("b", "b", drop=1),
        EloColumn("c", "c"),  # always shown, one value in every row: stays
        EloColumn("d", "d", drop=5),  # constant: goes before any rank
    ]
    texts = [["x", "1", "0", "3", "7", "9"], ["y", "2", "0", "4", "7", "9"]]
    assert give_way_order(columns, texts) == [5, 2, 1, 3]
    one_row = [["x", "", "0", "3", "7", "9"]]  # one row: only a blank column is silent
    assert give_way_order(columns, one_row) == [1, 5, 3]


def test_the_cli_renderer_leaves_out_the_shortest_start_of_that_order(example) -> None:
    """At every width, the columns ``eloledger elo`` leaves out are the first ones of
    ``give_way_order``: the order the TUI follows is the CLI's."""
    columns = elo_columns(example)
    texts = row_texts(example.players, columns)
    order = give_way_order(columns, texts)
    widths = [
        max([cell_len(c.title)] + [cell_len(r[i]) for r in texts]) for i, c in enumerate(columns)
    ]
    records = [shown_record(p) for p in example.players]
    table_columns = [c.table_column() for c in columns]
    seen = set()
    for width in range(sum(widths) + 2 * len(widths), 20, -1):
        hidden = not_shown(render_table(records, table_columns, width=width))
        gone = 0
        while gone < len(order):
            shown = [w for i, w in enumerate(widths) if i not in order[:gone]]
            if sum(shown) + 2 * (len(shown) - 1) <= width:
                break
            gone += 1
        assert hidden == [columns[i].title for i in sorted(order[:gone])], width
        seen.add(gone)
    assert len(seen) == len(order) + 1  # every step of the order was taken at some width


def test_a_run_anchors_at_its_baseline_as_the_demo_does(demo_run) -> None:
    spec = load_spec(demo_spec_path())
    comparisons, ledger = str(demo_run.comparisons), str(demo_run.ledger)
    report = elo_of_run(comparisons, ledger, spec, intervals="none")
    assert report.anchor == demo_run.report["anchor"] == spec.elo_anchor() == "best_of_1"
    cheapest = elo_of_files(comparisons, ledger, intervals="none").anchor
    assert cheapest == "cot"  # `eloledger elo` on the same files, no spec: the cheapest arm
    ghost = dataclasses.replace(spec.arms[0], name="ghost")  # a baseline that never played
    unplayed = dataclasses.replace(spec, arms=[ghost, *spec.arms[1:]])
    assert elo_of_run(comparisons, ledger, unplayed, intervals="none").anchor == cheapest
    asked = dataclasses.replace(spec, anchor="ghost")  # named by the spec: must have played
    with pytest.raises(UserError, match="ghost"):
        elo_of_run(comparisons, ledger, asked, intervals="none")
