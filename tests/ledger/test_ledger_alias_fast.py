"""Ledgers in the guides' field names (strategy, input_tokens, ...) take the tight fast path
via renamed fields, and give exactly what the exact path gives (house item 4)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from summary_oracle import summarize

from eloledger.ledger.columns import ALL_COLUMNS, SUMMARY_COLUMNS, alias_swaps, columns_from_rows
from eloledger.ledger.reader import iter_rows, read_ledger

GUIDE = {"arm": "strategy", "prompt_tokens": "input_tokens", "completion_tokens": "output_tokens"}


def _row(i: int, rng: random.Random) -> dict:
    ok = rng.random() > 0.1
    return {
        "run_id": "r",
        "task_id": f"t{rng.randrange(7)}",
        "arm": rng.choice(["a", "b", "c"]),
        "session": i % 3,
        "role": rng.choice(["sample", "select", "judge"]),
        "status": "ok" if ok else "error",
        "prompt_tokens": rng.randrange(1, 900) if ok else None,
        "completion_tokens": rng.randrange(1, 300) if ok else None,
        "ts": 1.7e9 + i,
    }


def _renamed(row: dict) -> dict:
    return {GUIDE.get(k, k): v for k, v in row.items()}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _same(a, b) -> None:  # noqa: ANN001
    for name in ALL_COLUMNS:
        x, y = a[name], b[name]
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y, equal_nan=True), name
        else:
            assert x.values() == y.values(), name


def test_swaps_are_read_from_the_first_line() -> None:
    line = json.dumps(_renamed(_row(0, random.Random(1)))).encode()
    swaps = dict(alias_swaps(line, SUMMARY_COLUMNS))
    assert swaps == GUIDE
    assert alias_swaps(b'{"arm": "a", "strategy": "b"}', SUMMARY_COLUMNS) == ()
    assert alias_swaps(b"not json", SUMMARY_COLUMNS) == ()


@pytest.mark.parametrize("mix", ["guide", "guide then canonical", "both names in a row"])
def test_guide_names_read_exactly(tmp_path: Path, mix: str) -> None:
    rng = random.Random(7)
    rows = [_row(i, rng) for i in range(400)]
    guide = [_renamed(r) for r in rows]
    if mix == "guide then canonical":
        guide[250:] = rows[250:]
    if mix == "both names in a row":
        guide[300] = {**guide[300], "arm": "zz"}  # canonical wins, as in canonical.py
    path = _write(tmp_path / "guide.jsonl", guide)
    fast = read_ledger(path)
    exact = columns_from_rows(list(iter_rows(path)), ALL_COLUMNS)
    _same(fast, exact)
    if mix == "guide":
        assert fast._rows is None  # the fast path read it (the exact path keeps its rows)
        canonical = read_ledger(_write(tmp_path / "canonical.jsonl", rows))
        assert summarize(fast) == summarize(canonical)
