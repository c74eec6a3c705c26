"""The fast path's column extraction (joint factorising, literal codes) equals the exact path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from eloledger.ledger.columns import (
    ALL_COLUMNS,
    FACTOR_COLUMNS,
    SUMMARY_COLUMNS,
    factorize,
    joint_factorize,
)
from eloledger.ledger.reader import iter_rows, read_ledger, read_rows

INFERRED = ("status", "role", "usage_source")


def _odd_rows(n: int) -> list[dict]:
    """Rows whose identifiers and defaults exercise every rule of the tight fast path."""
    rng = np.random.default_rng(11)
    arms = ["b", 17, "a", 17.0, True, "17"]  # 17, 17.0 and "17" are one arm; True is "true"
    rows = []
    for i in range(n):
        row: dict = {"task_id": int(rng.integers(30)) if i % 3 else f"t{rng.integers(30)}"}
        if i % 11:
            row["arm"] = arms[int(rng.integers(len(arms)))]
        if i % 5:
            row["role"] = ["select", "sample", "judge"][i % 3]
        kind = i % 9
        if kind == 0:
            row["error"] = "boom"  # no status: an error
        elif kind == 1:
            row["error_class"] = "timeout"  # no status: an error
        elif kind == 2:
            pass  # no status, no error: ok
        else:
            row["status"] = "error" if kind == 3 else "ok"
        if i % 4:
            row["prompt_tokens"] = int(rng.integers(0, 300))
            row["completion_tokens"] = int(rng.integers(0, 300))
        if i % 13 == 0:
            row["usage_source"] = "estimated"
        elif i % 17 == 0:
            row["usage_source"] = "missing"
        rows.append(row)
    return rows


@pytest.mark.parametrize("columns", [SUMMARY_COLUMNS, ALL_COLUMNS])
@pytest.mark.parametrize("workers", [1, 2])
def test_fast_columns_equal_exact_columns(tmp_path: Path, columns, workers: int) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in _odd_rows(4000)))
    fast = read_ledger(path, columns=columns, workers=workers)
    exact = read_rows(iter_rows(path), columns=columns)
    assert len(fast) == len(exact) == 4000
    for name in columns:
        if name in FACTOR_COLUMNS:
            assert fast[name].values() == exact[name].values(), name
            if name not in INFERRED:  # inferred values' levels may come in another order
                assert fast[name].levels == exact[name].levels, name  # first-seen order too
        else:
            np.testing.assert_array_equal(fast[name], exact[name], err_msg=name)
    assert sorted(fast["arm"].levels) == ["17", "a", "b", "true"]


def test_joint_factorize_keeps_first_seen_order() -> None:
    class Row:
        def __init__(self, arm, role) -> None:
            self.arm, self.role = arm, role

    rows = [Row("z", None), Row("y", "sample"), Row("z", "judge"), Row(None, "sample")]
    got = joint_factorize(rows, ("arm", "role"))
    assert got["arm"].levels == ["z", "y"] and got["arm"].codes.tolist() == [0, 1, 0, -1]
    assert got["role"].levels == ["sample", "judge"]
    assert got["role"].codes.tolist() == [-1, 0, 1, 0]


def test_joint_factorize_of_a_field_no_row_has_or_only_later_rows_have() -> None:
    class Row:
        def __init__(self, arm, role, status=None) -> None:
            self.arm, self.role, self.status = arm, role, status

    none_has = [Row("z", None), Row("y", None), Row("z", None), Row(None, None)]
    got = joint_factorize(none_has, ("arm", "role", "status"))
    assert got["arm"].levels == ["z", "y"] and got["arm"].codes.tolist() == [0, 1, 0, -1]
    assert got["role"].levels == [] and got["role"].codes.tolist() == [-1] * 4
    later = [Row("z", None), Row("y", None, "ok"), Row(None, "judge")]
    got = joint_factorize(later, ("arm", "role", "status"))
    assert [got[f].levels for f in ("arm", "role", "status")] == [["z", "y"], ["judge"], ["ok"]]
    assert got["status"].codes.tolist() == [-1, 0, -1] and got["role"].codes.tolist() == [-1, -1, 0]


def test_a_factor_taken_at_some_rows_is_those_rows_factorised_alone() -> None:
    values = ["b", None, "a", "c", "a", None, "b", "d"]
    whole = factorize(values)
    rng = np.random.default_rng(0)
    for _ in range(50):
        rows = np.sort(rng.choice(len(values), size=int(rng.integers(0, 9)), replace=False))
        alone = factorize([values[i] for i in rows.tolist()])
        taken = whole.take(rows)
        assert taken.levels == alone.levels and taken.codes.tolist() == alone.codes.tolist()
