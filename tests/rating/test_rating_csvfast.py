"""csvfast's factoriser: exact whatever the names and the hash seed, and a flood of names
crafted to collide costs no more work than ordinary names (the hash is seeded per call)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eloledger.rating.comparisons import read_comparisons
from eloledger.rating.csvfast import FactorWork, factorize, split_fields

_MIX = 0x9E3779B97F4A7C15  # the multiplier of an unseeded xor-multiply word hash
_MASK = (1 << 64) - 1
_FORBIDDEN = {0, ord("\n"), ord("\r"), ord(","), ord('"')}


def by_dict(values: list[bytes]) -> tuple[list[int], list[bytes]]:
    """Codes in order of first appearance, the plain way."""
    index: dict[bytes, int] = {}
    codes = [index.setdefault(v, len(index)) for v in values]
    return codes, list(index)


def colliding_names(count: int) -> list[bytes]:
    """16-byte names that all give one value under h = ((len ^ w0)·M ^ w1)·M, the unseeded
    word hash a table could use: w1 is solved from w0 so the state before the last multiply
    is the same constant for every name."""
    target = 0x0123456789ABCDEF
    names: list[bytes] = []
    k = 0
    while len(names) < count:
        w0 = int.from_bytes(f"n{k:07d}".encode(), "little")
        k += 1
        w1 = target ^ (((16 ^ w0) * _MIX) & _MASK)
        tail = w1.to_bytes(8, "little")
        if not _FORBIDDEN & set(tail):
            names.append(w0.to_bytes(8, "little") + tail)
    return names


def factor_column(values: list[bytes], seed: int | None = None, work: FactorWork | None = None):
    body = b"\n".join(b"t," + v for v in values)
    fields = split_fields(body, 2)
    assert fields is not None
    return factorize(fields, [1], seed=seed, work=work)


def test_crafted_names_collide_in_an_unseeded_hash() -> None:
    names = colliding_names(50)
    hashes = set()
    for name in names:
        w0 = int.from_bytes(name[:8], "little")
        w1 = int.from_bytes(name[8:], "little")
        hashes.add((((((16 ^ w0) * _MIX) & _MASK) ^ w1) * _MIX) & _MASK)
    assert len(set(names)) == 50 and len(hashes) == 1


def test_a_flood_of_colliding_names_costs_no_more_than_ordinary_names() -> None:
    """Work is counted, not timed: the rows that left the hash table for the exact sort."""
    rng = np.random.default_rng(7)
    count, rows = 3000, 60_000
    crafted = colliding_names(count)
    ordinary = [f"model-{k:010d}".encode() for k in range(count)]  # 16 bytes as well
    picks = rng.integers(0, count, rows)
    for seed in (1, 2, 3):
        work = {}
        for label, names in (("crafted", crafted), ("ordinary", ordinary)):
            values = [names[p] for p in picks]
            work[label] = FactorWork()
            got = factor_column(values, seed=seed, work=work[label])
            assert got is not None
            codes, distinct = got
            assert (codes.tolist(), distinct) == by_dict(values)
        assert work["crafted"].rows == work["ordinary"].rows == rows
        # about 1/64 of the values share a bucket (32 buckets per value): allow 4x that
        assert work["crafted"].sorted_rows <= rows // 16, work
        assert work["ordinary"].sorted_rows <= rows // 16, work
        assert work["crafted"].buckets == work["ordinary"].buckets


@pytest.mark.parametrize("seed", [None, 0, 1, 2**64 - 1])
def test_factorize_is_exact_for_any_seed_and_length(seed: int | None) -> None:
    """Lengths 0 to 64 bytes (every word boundary), names that differ only in their last
    byte, and NUL bytes ("a" and "a\\0" are different names)."""
    rng = np.random.default_rng(11)
    pool = [b"", b"a", b"a\x00", b"a\x00\x00", b"\x00"]
    for n in range(1, 65):
        base = bytes(rng.integers(33, 127, n, dtype=np.uint8).tolist()).replace(b",", b";")
        pool += [base, base[:-1] + b"!", base[:-1] + b"~"]
    values = [pool[k] for k in rng.integers(0, len(pool), 5000)]
    got = factor_column(values, seed=seed)
    assert got is not None
    codes, distinct = got
    assert (codes.tolist(), distinct) == by_dict(values)


def test_every_row_colliding_still_exact() -> None:
    """Even if every row missed its bucket (here: all the same bucket count of one value),
    grouping stays exact: a single distinct value and many distinct ones."""
    same = [b"x" * 20] * 1000
    codes, distinct = factor_column(same, seed=5)
    assert codes.tolist() == [0] * 1000 and distinct == [b"x" * 20]
    many = [f"{k:030d}".encode() for k in range(20_000)]
    codes, distinct = factor_column(many, seed=5)
    assert codes.tolist() == list(range(20_000)) and distinct == many


def test_colliding_names_read_like_the_csv_module(tmp_path: Path) -> None:
    """End to end: a comparisons file of crafted names reads the same as a careful read."""
    names = [n.decode("latin-1") for n in colliding_names(40)]
    rng = np.random.default_rng(3)
    rows = [(f"t{k}", names[a], names[(a + 1 + b) % 40]) for k, (a, b) in
            enumerate(zip(rng.integers(0, 40, 400), rng.integers(0, 39, 400), strict=True))]
    path = tmp_path / "c.csv"
    path.write_bytes(
        ("task_id,winner,loser\n" + "".join(f"{t},{a},{b}\n" for t, a, b in rows)).encode("latin-1")
    )
    comps = read_comparisons(path)
    index: dict[str, int] = {}
    for _t, a, b in rows:
        index.setdefault(a, len(index))
        index.setdefault(b, len(index))
    assert len(comps.players) == 40 and len(comps) == 400
    expected_i = [index[a] for _t, a, _b in rows]
    assert comps.i.tolist() == expected_i
