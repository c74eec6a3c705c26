"""Counting a batch's lines without splitting it (``fastread.count_lines``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eloledger.ledger.batches import batch_lines
from eloledger.ledger.fastread import count_lines


@given(st.lists(st.sampled_from(b"ab \n"), max_size=300), st.integers(0, 300))
def test_the_lines_counted_are_the_lines_a_batch_splits_into(chars: list[int], cut: int) -> None:
    data = bytes(chars)
    end = min(cut, len(data))
    assert count_lines(data, end) == len(batch_lines(data[:end]))
    assert count_lines(memoryview(data), end) == len(batch_lines(data[:end]))
