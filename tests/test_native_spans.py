"""The compiled span factoriser (rating/_spans.c) against a dict and the numpy way.

Codes must come in order of first appearance and the values must be the spans' bytes, for
any bytes (long fields, empty ones, equal hashes of different lengths); spans outside the
buffer are refused, never read. And a comparisons file reads the same with it and without.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eloledger.rating import csvfast
from eloledger.rating.comparisons import read_comparisons


def test_the_factoriser_is_built() -> None:
    assert csvfast._spans is not None, "rating/_spans.c did not build: see pip's output"


def oracle(fields: list[bytes]) -> tuple[list[int], list[bytes]]:
    index: dict[bytes, int] = {}
    codes = [index.setdefault(f, len(index)) for f in fields]
    return codes, list(index)


def spans(fields: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fields laid end to end in a buffer padded as split_fields pads it."""
    body = b"".join(fields)
    ends = np.cumsum([len(f) for f in fields], dtype=np.int64)
    starts = ends - np.array([len(f) for f in fields], dtype=np.int64)
    buf = np.zeros(len(body) + csvfast.MAX_WIDTH + 8, dtype=np.uint8)
    buf[: len(body)] = np.frombuffer(body, dtype=np.uint8)
    return buf, starts, ends


FIELDS = st.lists(
    st.one_of(
        st.sampled_from([b"", b"a", b"model-0001", b"model-0002", b"\x00", b"\x00\x00"]),
        st.binary(max_size=12),
        st.binary(min_size=60, max_size=90),  # wider than the numpy way takes
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None)
@given(fields=FIELDS)
def test_codes_and_values_match_a_dict(fields: list[bytes]) -> None:
    buf, starts, ends = spans(fields)
    codes, values = csvfast._spans.factorize(buf, starts, ends)
    want_codes, want_values = oracle(fields)
    assert np.frombuffer(codes, dtype=np.int64).tolist() == want_codes
    assert values == want_values
    slow = csvfast.factorize_numpy(buf, starts, ends)
    if slow is not None:  # the numpy way gives up on fields over MAX_WIDTH
        assert slow[0].tolist() == want_codes and slow[1] == want_values


def test_many_distinct_and_repeated_values() -> None:
    fields = [f"p{i % 5000}".encode() for i in range(200_000)]
    buf, starts, ends = spans(fields)
    codes, values = csvfast.factorize(buf, starts.reshape(-1, 2), ends.reshape(-1, 2))
    assert codes.tolist() == oracle(fields)[0] and values == oracle(fields)[1]


@pytest.mark.parametrize(
    ("starts", "ends"),
    [([0], [11]), ([-1], [2]), ([3], [2]), ([0, 1], [1])],
)
def test_spans_outside_the_buffer_are_refused(starts: list[int], ends: list[int]) -> None:
    with pytest.raises(ValueError, match="outside the buffer|differ in length"):
        csvfast._spans.factorize(
            b"0123456789", np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
        )


def test_only_int64_spans_are_read() -> None:
    with pytest.raises(TypeError, match="int64"):
        csvfast._spans.factorize(b"ab", np.array([0], dtype=np.int32), np.array([1]))


def test_a_file_reads_the_same_with_and_without(tmp_path, monkeypatch) -> None:
    long_name = "m" * 80  # over MAX_WIDTH: the numpy way hands it to the object path
    rows = ["task_id,a,b,outcome"]
    rng = np.random.default_rng(5)
    names = ["alpha", "beta", "gamma", long_name, "δέλτα"]
    for t in range(400):
        a, b = rng.choice(len(names), 2, replace=False)
        rows.append(f"t{t % 37},{names[a]},{names[b]},{rng.choice(['1', '0', '0.5'])}")
    path = tmp_path / "c.csv"
    path.write_text("\n".join(rows) + "\n")
    fast = read_comparisons(path)
    monkeypatch.setenv("ELOLEDGER_NATIVE", "0")
    slow = read_comparisons(path)
    assert fast.players == slow.players and fast.tasks == slow.tasks
    assert long_name in fast.players
    for field in ("i", "j", "outcome", "weight", "task", "lines"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field
