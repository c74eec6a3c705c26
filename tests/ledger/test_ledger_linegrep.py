"""The side scan for rare rows: right line numbers, and a huge line passed over, not held."""

from __future__ import annotations

import json
from pathlib import Path

from eloledger.ledger.linegrep import scan_lines


def _found(path: Path) -> list[str]:
    hits: list[str] = []
    scan_lines(path, (b'"total_tokens": 0',), lambda row, where: hits.append(where))
    return hits


def test_lines_are_named_after_a_line_longer_than_the_scan_holds(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    zero = json.dumps({"arm": "a", "total_tokens": 0})
    with path.open("w") as fh:
        fh.write(zero + "\n")
        fh.write(json.dumps({"arm": "a", "total_tokens": 1}) + "\n")
        fh.write('{"arm": "b", "total_tokens": 0, "content": "' + "x" * (20 << 20) + '"}\n')
        fh.write(zero + "\n" + zero)  # the last line without its newline
    assert _found(path) == [f"{path}:1", f"{path}:4", f"{path}:5"]  # line 3: passed over
