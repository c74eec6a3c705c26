"""The shared renderers and the dispatcher's error contract (one line, exit status 2)."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from eloledger.cli import main
from eloledger.tables import Column, render, to_json

RECORDS = [
    {"name": "best_of_1", "elo": 1000.0, "tokens": 512, "note": "a|b"},
    {"name": "best_of_8", "elo": 1123.456, "tokens": 4096, "note": None},
]
COLUMNS = [
    Column("name", "Arm"),
    Column("elo", "Elo", 1),
    Column("tokens", "Tokens"),
    Column("note", "Note"),
]


def test_table_aligns_numbers_right() -> None:
    lines = render("table", RECORDS, COLUMNS).splitlines()
    assert lines[0].split() == ["Arm", "Elo", "Tokens", "Note"]
    assert "1123.5" in lines[3]
    assert lines[2].index("1000.0") + len("1000.0") == lines[3].index("1123.5") + len("1123.5")


def test_csv_round_trips_and_markdown_escapes_pipes() -> None:
    rows = list(csv.DictReader(io.StringIO(render("csv", RECORDS, COLUMNS))))
    assert rows[1]["elo"] == "1123.5" and rows[0]["note"] == "a|b"
    md = render("md", RECORDS, COLUMNS)
    assert "a\\|b" in md and md.splitlines()[1].startswith("|---")


def test_json_turns_nan_and_inf_into_null() -> None:
    payload = json.loads(to_json({"x": math.nan, "y": [math.inf, 1.5]}))
    assert payload == {"x": None, "y": [None, 1.5]}


def test_usage_error_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
