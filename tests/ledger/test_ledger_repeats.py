"""The duplicate rules over a spill of row keys (:mod:`eloledger.ledger.repeats`): what they
find and name equals the line-by-line finder's, and the spill gives its records back a part at
a time, in the order they were written."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ledger_dedupe_bulk import ledgers

from eloledger.ledger import keyspill, merge
from eloledger.ledger import repeats as repeat_rules
from eloledger.ledger.batches import batch_lines
from eloledger.ledger.dedupe import duplicate_message


def test_the_warning_counts_every_repeat_and_names_the_first_three() -> None:
    pairs = [("a:2", "a:1"), ("a:3", "a:1"), ("a:4", "a:1")]
    every = pairs + [("a:9", "a:1")] * 997
    assert duplicate_message(pairs, total=1000) == duplicate_message(every)
    assert "1000 duplicate rows" in duplicate_message(pairs, total=1000)


@settings(max_examples=120, deadline=None)
@given(ledgers(), st.sampled_from([40, 150, 1 << 20]))
def test_repeats_found_in_the_spill_equal_the_line_by_line_finder(
    files: list[bytes], size: int
) -> None:
    """Hypothesis's ledgers (aliases, numbers as text, padded lines, the same call written
    another way), blank lines left out (those take the exact path), their keys written in
    batches of ``size`` by one writer per file: every repeat the finder names, and its first
    line, and no other row."""
    files = [b"".join(line + b"\n" for line in body.split(b"\n") if line.strip()) for body in files]
    files = [body for body in files if body]
    if not files:
        return
    calls = len(files) > 1
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"l{i}.jsonl" for i in range(len(files))]
        spill = Path(tmp) / "spill"
        spill.mkdir()
        for source, (path, body) in enumerate(zip(paths, files, strict=True)):
            path.write_bytes(body)
            keys = repeat_rules.RowKeys(spill, source, calls)
            first, pos = 0, 0
            while pos < len(body):
                cut = body.rfind(b"\n", pos, pos + size) + 1 or body.find(b"\n", pos) + 1
                first += keys.add(path, source, first, pos, body[pos:cut])
                pos = cut
            keys.close()
        sources = np.arange(len(files), dtype=np.int64)
        repeated = repeat_rules.find_repeats(spill, len(files), sources, calls)
        repeat_rules.confirm(repeated, paths)
        data = [(str(path), body) for path, body in zip(paths, files, strict=True)]
        expected_keep, expected_pairs = merge._find_duplicates_by_line(data)

    def where(row: int) -> str:
        return f"{paths[row >> 40]}:{(row & repeat_rules.LINE_MASK) + 1}"

    offsets = np.cumsum([0, *(body.count(b"\n") for body in files)])
    keep = np.ones(offsets[-1], dtype=bool)
    keep[offsets[repeated.rows >> 40] + (repeated.rows & repeat_rules.LINE_MASK)] = False
    assert keep.tolist() == np.asarray(expected_keep).tolist()
    found = [(where(a), where(b)) for a, b in zip(repeated.rows, repeated.firsts, strict=True)]
    assert found == expected_pairs


def test_a_part_of_the_spill_comes_back_in_the_order_it_was_written(
    tmp_path: Path, monkeypatch
) -> None:
    """Records are split by their hash's top bits, flushed a few at a time (stable within a
    part), and a part is read writer after writer: reading order is kept."""
    monkeypatch.setattr(keyspill, "_FLUSH", 1000)
    rng = np.random.default_rng(7)
    keys = rng.integers(-(2**63), 2**63 - 1, 20_000, dtype=np.int64)
    keys[::50] = keys[0]  # one hash many times, in every writer
    rows = np.arange(len(keys), dtype=np.int64)
    for writer, part in enumerate(np.array_split(np.arange(len(keys)), 3)):
        spill = keyspill.SpillWriter(tmp_path, f"w{writer}")
        for batch in np.array_split(part, 17):
            spill.add(keys[batch], rows[batch], rows[batch] * 10)
        spill.close()
    got = [keyspill.read_part(tmp_path, ["w0", "w1", "w2"], p) for p in range(keyspill.PARTS)]
    tops = (keys.view(np.uint64) >> np.uint64(64 - keyspill.PART_BITS)).astype(int)
    for part, records in enumerate(got):
        expected = np.flatnonzero(tops == part)
        assert records[:, 1].tolist() == expected.tolist()
        assert np.array_equal(records[:, 0], keys[expected])
        assert np.array_equal(records[:, 2], expected * 10)
    assert sum(len(r) for r in got) == len(keys)


@given(
    st.lists(st.lists(st.sampled_from(b'{[a]}"\xfb\xdb'), max_size=40), max_size=60),
    st.integers(0, 6),
    st.booleans(),
)
def test_every_line_with_more_brackets_than_allowed_is_counted_exactly(
    bodies: list[list[int]], least: int, last_has_newline: bool
) -> None:
    """Lines as the fold keeps them (an object each: at least one ``{``): a line with more
    than ``least`` brackets is counted exactly, so the depth rule scans it."""
    lines = [b"{" + bytes(body) for body in bodies]
    data = b"\n".join(lines) + (b"\n" if last_has_newline and lines else b"")
    raw = np.frombuffer(data, dtype=np.uint8)
    counts = repeat_rules._brackets_per_line(raw, np.flatnonzero(raw == 10), len(lines), least)
    for line, counted in zip(lines, counts.tolist(), strict=True):
        exact = line.count(b"{") + line.count(b"[")
        if exact > least:
            assert counted == exact
        else:
            assert counted in (0, exact)


@given(st.lists(st.sampled_from(b"ab \n"), max_size=300))
def test_the_newlines_found_from_the_lines_are_the_bytes_newlines(chars: list[int]) -> None:
    data = bytes(chars)
    found = repeat_rules._newlines(batch_lines(data), data)
    assert found.tolist() == np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10).tolist()
