"""The task bootstrap's shared pieces: the units each round redraws, how often each is drawn,
and the equal-tailed interval read off the rounds.

Why one module: the Elo refit bootstrap (:mod:`eloledger.rating.bootstrap`), the budget curves,
the fairness verdict and the CI gates all resample tasks with replacement and read percentiles.
Written once, the same seed draws the same tasks everywhere and an interval means one thing.

Reproducibility: :func:`resample_indices` is exactly one ``rng.integers(0, units, (rounds,
units))`` call, so a caller that draws all its rounds at once and one that draws a round at a
time (``rounds=1``, with other draws in between) each keep the stream they had. The two
interval functions differ only in how the tail is written (see :func:`quantile_interval`);
each caller keeps the one whose numbers it has always printed.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np


def resample_indices(rng: np.random.Generator, units: int, rounds: int) -> np.ndarray:
    """Unit indices drawn uniformly with replacement, one row of ``units`` per round
    (rounds x units). Exactly the one generator call every caller made before, so a caller
    moved onto it draws the same tasks from the same seed (``rounds=1`` for a round at a time)."""
    return rng.integers(0, units, (rounds, units))


def multiplicities(indices: np.ndarray, units: int) -> np.ndarray:
    """How often each unit was drawn in each round (rounds x units, integers): the round's
    weights, so a statistic that is a weighted sum is recomputed without gathering rows.
    One ``bincount`` for all rounds (each round's ids offset by round x units)."""
    rounds = indices.shape[0]
    offsets = (np.arange(rounds)[:, None] * units + indices).ravel()
    return np.bincount(offsets, minlength=rounds * units).reshape(rounds, units)


def percentile_interval(
    samples: np.ndarray, percent: float = 95.0, *, axis: int | None = None
) -> tuple[Any, Any]:
    """The equal-tailed ``percent`` % percentile interval of the rounds (numpy's default
    linear interpolation): two numbers with ``axis=None``, else two arrays along ``axis``.

    The tails are computed in percent, (100 - percent)/2, which is exact for the usual levels
    (95 gives 2.5 and 97.5), so the interval is ``np.percentile(samples, [2.5, 97.5])``'s to
    the last bit."""
    tail = (100.0 - percent) / 2.0
    low, high = np.percentile(samples, [tail, 100.0 - tail], axis=axis)
    return low, high


def quantile_interval(
    samples: np.ndarray,
    level: float,
    *,
    axis: int | None = None,
    method: Literal["linear", "inverted_cdf"] = "linear",
) -> tuple[Any, Any]:
    """The equal-tailed interval at ``level`` (a fraction, as the rating code's ``level``
    arguments are): the quantiles alpha and 1 - alpha, alpha = (1 - level)/2, by ``method``
    (``"inverted_cdf"`` for integer ranks, so a bound is a rank that occurred); numbers or
    arrays as in :func:`percentile_interval`.

    Why not :func:`percentile_interval`: in binary (1 - 0.95)/2 is 0.025000000000000022, not
    0.025, and with ``inverted_cdf`` at 1000 rounds that picks the 26th smallest round, not the
    25th; the rank intervals have always been read this way, so they stay so."""
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(samples, [alpha, 1.0 - alpha], axis=axis, method=method)
    return low, high
