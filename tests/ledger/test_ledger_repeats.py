"""The duplicate rules batch by batch (:mod:`eloledger.ledger.repeats`): what they leave out
and name equals the line-by-line finder's, and the key store they keep."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ledger_dedupe_bulk import ledgers

from eloledger.ledger import merge
from eloledger.ledger import repeats as repeat_rules
from eloledger.ledger.dedupe import duplicate_message


def test_the_warning_counts_every_repeat_and_names_the_first_three() -> None:
    pairs = [("a:2", "a:1"), ("a:3", "a:1"), ("a:4", "a:1")]
    every = pairs + [("a:9", "a:1")] * 997
    assert duplicate_message(pairs, total=1000) == duplicate_message(every)
    assert "1000 duplicate rows" in duplicate_message(pairs, total=1000)


@settings(max_examples=120, deadline=None)
@given(ledgers(), st.sampled_from([40, 150, 1 << 20]))
def test_streamed_repeats_equal_the_line_by_line_finder(files: list[bytes], size: int) -> None:
    """Hypothesis's ledgers (aliases, numbers as text, padded lines, the same call written
    another way), blank lines left out (those take the exact path), in batches of ``size``;
    a repeat of an earlier batch's line is confirmed when settle() reads the files again, and
    the shown pairs name the same first lines."""
    files = [b"".join(line + b"\n" for line in body.split(b"\n") if line.strip()) for body in files]
    files = [body for body in files if body]
    if not files:
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"l{i}.jsonl" for i in range(len(files))]
        for path, body in zip(paths, files, strict=True):
            path.write_bytes(body)
        data = [(str(path), body) for path, body in zip(paths, files, strict=True)]
        expected_keep, expected_pairs = merge._find_duplicates_by_line(data)
        repeats = repeat_rules.Repeats(paths)
        keep = []
        for source, body in enumerate(files):
            number, pos = 1, 0
            while pos < len(body):
                cut = body.rfind(b"\n", pos, pos + size) + 1 or body.find(b"\n", pos) + 1
                chunk = body[pos:cut]
                keep += repeats.keep(source, number, chunk).tolist()
                number += chunk.count(b"\n")
                pos = cut
            repeats.end_of_file()
        repeats.settle(
            [(i, p, 0, len(b)) for i, (p, b) in enumerate(zip(paths, files, strict=True))]
        )
    assert keep == np.asarray(expected_keep).tolist()
    assert repeats.count == len(expected_pairs)
    assert [(repeats.where(a), repeats.where(b)) for a, b in repeats.shown] == expected_pairs[:3]


def test_draining_the_seen_keys_gives_them_all_sorted_and_empties_the_store() -> None:
    rng = np.random.default_rng(3)
    store = repeat_rules.SeenKeys()
    every = np.unique(rng.integers(-(2**63), 2**63 - 1, 50_000, dtype=np.int64))
    for part in np.array_split(rng.permutation(every), 7):
        store.add(part)
    assert np.array_equal(store.drain(), every)
    assert store.size == 0 and not store.lookup(every).any()


def test_seen_keys_answer_as_a_set_for_sorted_unsorted_and_sliced_lookups(monkeypatch) -> None:
    """Keys go in unsorted (a batch) or sorted (a worker's drained keys, not sorted again);
    a lookup of more keys than a slice is done a slice at a time: the answers are a set's."""
    monkeypatch.setattr(repeat_rules, "_SLICE", 1000)
    rng = np.random.default_rng(5)
    every = np.unique(rng.integers(-(2**63), 2**63 - 1, 40_000, dtype=np.int64))
    every = np.concatenate((every, [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1]))
    every = rng.permutation(np.unique(every))
    stored, others = every[:30_000], every[30_000:]
    store = repeat_rules.SeenKeys()
    store.add(stored[:10_000])  # unsorted
    store.add(np.sort(stored[10_000:]))  # sorted, as a drain gives them
    asked = rng.permutation(np.concatenate((stored[::3], others)))
    expected = np.isin(asked, stored)
    assert np.array_equal(store.lookup(asked), expected) and expected.any() and not expected.all()
    assert np.array_equal(store.drain(), np.sort(stored))


@given(st.lists(st.sampled_from(b'{[a]}"\n\xfb\xdb'), max_size=600))
def test_brackets_are_counted_per_line_as_the_lines_hold_them(chars: list[int]) -> None:
    data = bytes(chars)
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # (a batch's last line may lack its newline: it counts)
    raw = np.frombuffer(data, dtype=np.uint8)
    counts = repeat_rules._brackets_per_line(raw, np.flatnonzero(raw == 10), len(lines), 0)
    assert counts.tolist() == [line.count(b"{") + line.count(b"[") for line in lines]
