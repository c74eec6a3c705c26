"""The task bootstrap's shared pieces (rating.resample): the draws are the generator call every
caller made before, the multiplicities are the per-round counts, and the intervals are numpy's
percentiles to the last bit, so moving a caller onto them changes no printed number."""

from __future__ import annotations

import numpy as np
import pytest

from eloledger.rating.resample import (
    multiplicities,
    percentile_interval,
    quantile_interval,
    resample_indices,
)


def test_draws_are_deterministic_per_seed_and_differ_across_seeds() -> None:
    first = resample_indices(np.random.default_rng(7), 13, 50)
    again = resample_indices(np.random.default_rng(7), 13, 50)
    other = resample_indices(np.random.default_rng(8), 13, 50)
    assert first.shape == (50, 13)
    assert first.min() >= 0 and first.max() < 13
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("units", [1, 7, 46])
def test_draws_are_the_stream_the_callers_drew_before(units: int) -> None:
    # All rounds at once was rng.integers(0, n, (R, n)); a round at a time, interleaved with
    # other draws (the budget curves' sessions), was rng.integers(0, n, n) per round.
    assert np.array_equal(
        resample_indices(np.random.default_rng(3), units, 20),
        np.random.default_rng(3).integers(0, units, (20, units)),
    )
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(4):
        assert np.array_equal(resample_indices(ours, units, 1)[0], theirs.integers(0, units, units))
        assert ours.random(3).tolist() == theirs.random(3).tolist()  # the stream stays in step


def test_multiplicities_count_each_rounds_draws() -> None:
    draws = resample_indices(np.random.default_rng(1), 9, 30)
    counts = multiplicities(draws, 9)
    assert counts.shape == (30, 9)
    assert np.array_equal(counts, np.stack([np.bincount(d, minlength=9) for d in draws]))
    assert (counts.sum(1) == 9).all()


def test_percentile_interval_is_numpys_to_the_last_bit() -> None:
    sample = np.random.default_rng(2).standard_normal((200, 6))
    low, high = percentile_interval(sample, 95.0, axis=0)
    both = np.percentile(sample, [2.5, 97.5], axis=0)
    assert low.tobytes() == both[0].tobytes() and high.tobytes() == both[1].tobytes()
    flat = sample[:, 0]
    assert percentile_interval(flat, 90.0) == tuple(np.percentile(flat, [5.0, 95.0]))
    # a known sample: 0..100, so the p-th percentile is p
    assert percentile_interval(np.arange(101.0), 95.0) == (2.5, 97.5)


def test_quantile_interval_keeps_the_rating_codes_tail() -> None:
    ranks = np.random.default_rng(4).integers(1, 8, (1000, 5))
    alpha = (1.0 - 0.95) / 2.0
    want = np.quantile(ranks, [alpha, 1.0 - alpha], axis=0, method="inverted_cdf")
    low, high = quantile_interval(ranks, 0.95, axis=0, method="inverted_cdf")
    assert np.array_equal(low, want[0]) and np.array_equal(high, want[1])
    # why it is kept apart from percentile_interval: that tail is a hair above 0.025
    ordered = np.arange(1, 1001)
    assert quantile_interval(ordered, 0.95, method="inverted_cdf") == (26, 975)
    values = np.random.default_rng(6).standard_normal(300)
    tail = (1.0 - 0.9) / 2.0
    assert quantile_interval(values, 0.9) == tuple(np.quantile(values, [tail, 1.0 - tail]))
