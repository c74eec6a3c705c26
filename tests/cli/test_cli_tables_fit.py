"""At 80 columns a table leaves out what says nothing first (a blank
or constant column), never cuts a number, keeps `tokens`' prompt/completion, says why marg/1k
is blank when `dominated` did not fit, and honours COLUMNS when piped.

The commands run in a real 80-column pseudo-terminal (tests/pty_support.py), as a user sees them.
"""

from __future__ import annotations

import os
import subprocess
from importlib import resources
from pathlib import Path

from eloledger.tables import Column, render_table
from pty_support import CLI, run_on_pty

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def on_pty(*argv: str) -> str:
    status, out = run_on_pty(list(argv), cols=80, env={"NO_COLOR": "1"})
    assert status == 0, out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    return out


def header(out: str) -> list[str]:
    return out.splitlines()[0].split()


def test_blank_and_constant_columns_go_before_ranked_ones() -> None:
    records = [
        {"name": "alpha", "zero": 0, "blank": None, "same": 7, "rank1": 11, "rank2": 22},
        {"name": "beta", "zero": 0, "blank": None, "same": 7, "rank1": 12, "rank2": 23},
    ]
    columns = [
        Column("name", "name"),
        Column("zero", "zeros"),  # always shown, but all zero: may go
        Column("blank", "blank", drop=1),
        Column("same", "same", drop=1),
        Column("rank1", "rank1", drop=1),
        Column("rank2", "rank2", drop=2),
    ]
    full = render_table(records, columns)
    assert header(full) == ["name", "zeros", "blank", "same", "rank1", "rank2"]
    out = render_table(records, columns, width=20)
    assert header(out) == ["name", "rank1", "rank2"]  # the ranked ones stay: they say something
    note = " ".join(out.splitlines()[4:])
    assert "zeros (0 in every row)" in note and "blank (blank in every row)" in note
    assert "same (7 in every row)" in note and "rank" not in note


def test_a_constant_that_is_not_zero_stays_when_the_column_is_always_shown() -> None:
    records = [{"name": "a", "kind": "single", "x": 1}, {"name": "b", "kind": "single", "x": 2}]
    columns = [Column("name", "name"), Column("kind", "kind"), Column("x", "x", drop=1)]
    out = render_table(records, columns, width=9)
    assert header(out) == ["name", "kind"]  # x (ranked) goes; kind has no rank and says single


def test_one_row_is_never_constant() -> None:
    records = [{"name": "a", "n": 5, "m": 6}]
    columns = [Column("name", "name"), Column("n", "n", drop=1), Column("m", "m", drop=2)]
    out = render_table(records, columns, width=7)
    assert header(out) == ["name", "n"]  # m goes by its rank, and the note says no "in every row"
    assert "(not shown to fit 7 columns: m;" in " ".join(out.split())


def test_a_number_in_a_text_column_is_never_cut() -> None:
    """Before: the widest text column was cut, number or not: 123456789012345678 read 1234…"""
    records = [
        {"name": "a-long-arm-name", "value": "123456789012345678"},
        {"name": "b", "value": "n/a"},
    ]
    columns = [Column("name", "name"), Column("value", "value")]
    out = render_table(records, columns, width=28)
    lines = out.splitlines()
    assert "123456789012345678" in lines[2] and "n/a" in lines[3]
    assert lines[2].startswith("a-long-…  ")  # the name gives way instead
    assert max(len(line) for line in lines) <= 28


def test_names_that_differ_at_the_end_are_cut_in_the_middle_not_made_equal() -> None:
    """Before: run ids 20261204T222724-d4ca84 and 20261204T222751-b4fbf3 both read
    "20261204T222…" at 80 columns, and two runs looked like one."""
    ids = ["20261204T222724-d4ca84", "20261204T222751-b4fbf3", "short"]
    records = [{"run": run, "n": 1} for run in ids]
    out = render_table(records, [Column("run", "run"), Column("n", "n")], width=15)
    cells = [line.split()[0] for line in out.splitlines()[2:]]
    assert cells == ["20261…d4ca84", "20261…b4fbf3", "short"], cells
    assert max(len(line) for line in out.splitlines()) <= 15
    arms = [{"run": "self_consistency_5", "n": 1}, {"run": "best_of_8_long_name", "n": 2}]
    cut = render_table(arms, [Column("run", "run"), Column("n", "n")], width=15).splitlines()
    assert [line.split()[0] for line in cut[2:]] == ["self_consis…", "best_of_8_l…"]  # the end


def test_tokens_at_80_columns_keeps_prompt_and_completion() -> None:
    out = on_pty("tokens", str(EXAMPLES / "ledger.jsonl"))
    cols = header(out)
    assert {"prompt", "completion", "total", "calls"} <= set(cols), out
    assert "usage" not in cols and "errors" not in cols  # all zero in the example ledger
    note = " ".join(out.split())
    assert "usage missing (0 in every row)" in note and "errors (0 in every row)" in note
    assert "1,153,310" in out  # completion total: a number in full


def test_elo_at_80_columns_says_why_marg_is_blank() -> None:
    out = on_pty("elo", "--example", "--bootstrap", "50")
    cols = header(out)
    assert "marg/1k" in cols and "dominated" not in cols
    joined = " ".join(out.split())
    assert "marg/1k blank: dominated" in joined and joined.endswith(": long_cot")
    assert "games (320 in every row)" in joined
    wide = run_on_pty(["elo", "--example", "--bootstrap", "50", "--wide"], cols=80)[1]
    assert "dominated" in header(wide) and "marg/1k blank" not in wide  # the column says it


def piped(*argv: str, env: dict[str, str]) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | env
    done = subprocess.run([*CLI, *argv], capture_output=True, text=True, env=environ, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_piped_tables_honour_columns() -> None:
    ledger = str(EXAMPLES / "ledger.jsonl")
    narrow = piped("tokens", ledger, env={"COLUMNS": "72"})
    assert max(len(line) for line in narrow.splitlines()) <= 72 and "--wide shows all" in narrow
    full = piped("tokens", ledger, env={})
    assert "p95 ms" in full and "not shown" not in full
