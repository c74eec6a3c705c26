"""The user's own price table: cost columns for models the user priced, never a guess.

``prices.toml`` in eloledger's config folder (:func:`eloledger.locations.config_dir`),
per model, per 1M tokens, in whatever currency the user bills in::

    [models."gpt-4o"]
    input = 2.50        # prompt tokens not read from or written to the cache
    output = 10.00      # completion tokens (reasoning included)
    cache_read = 1.25   # cached_tokens
    cache_write = 3.75  # cache_write_tokens

``input`` and ``output`` are required. A model with cache tokens but no cache price gets no
cost (eloledger does not guess one), and neither does a model that is not in the table.
Nothing is ever fetched.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tomlkit
from tomlkit.exceptions import ParseError

from eloledger.errors import UserError

PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Price:
    """Per 1M tokens; None where the user gave no price."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


def prices_path() -> Path:
    from eloledger.locations import prices_path as located

    return located()


def load_prices(path: str | os.PathLike[str] | None = None) -> dict[str, Price]:
    """The price table ({} when the file does not exist); UserError naming a bad entry."""
    path = Path(path) if path is not None else prices_path()
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the price table ({exc})") from None
    if text.startswith("\ufeff"):
        raise UserError(f"{path}: starts with a UTF-8 BOM", fix="save it as UTF-8 without BOM")
    try:
        data = tomlkit.parse(text).unwrap()
    except ParseError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise UserError(f"{path}: [models] must be a table", fix='[models."MODEL"] input = ...')
    return {str(name): _price(path, str(name), entry) for name, entry in models.items()}


def _price(path: Path, model: str, entry: Any) -> Price:
    where = f'{path}: [models."{model}"]'
    if not isinstance(entry, dict):
        raise UserError(f"{where} must be a table", fix="input = 2.5 and output = 10 per 1M")
    unknown = sorted(set(entry) - set(PRICE_FIELDS))
    if unknown:
        raise UserError(
            f"{where}: unknown key {unknown[0]!r}", fix=f"use {', '.join(PRICE_FIELDS)}"
        )
    values: dict[str, float | None] = {}
    for key in PRICE_FIELDS:
        value = entry.get(key)
        if value is None:
            if key in ("input", "output"):
                raise UserError(f"{where}: {key} is missing", fix=f"add {key} = PRICE per 1M")
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserError(f"{where}: {key} must be a number", fix=f"{key} = 2.5")
        if not math.isfinite(value) or value < 0:
            raise UserError(f"{where}: {key} = {value} is not a price", fix="a number >= 0")
        values[key] = float(value)
    return Price(**values)  # type: ignore[arg-type]


def row_costs(
    models: list[str],
    codes: np.ndarray,
    counts: dict[str, np.ndarray],
    prices: dict[str, Price],
) -> np.ndarray:
    """Cost of each row (NaN: the model has no price, or lacks the price its tokens need).

    ``counts``: prompt/completion/cached/cache_write token columns (NaN read as 0).
    """
    n = len(codes)
    prompt, completion, cached, written = (
        np.nan_to_num(counts.get(k, np.zeros(n)), nan=0.0)
        for k in ("prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens")
    )
    table = np.full((len(models) + 1, 4), np.nan)
    for i, model in enumerate(models):
        price = prices.get(model)
        if price is not None:
            table[i] = [
                price.input,
                price.output,
                np.nan if price.cache_read is None else price.cache_read,
                np.nan if price.cache_write is None else price.cache_write,
            ]
    rates = table[np.where(codes < 0, len(models), codes)]
    fresh = np.maximum(prompt - cached - written, 0.0)
    cost = fresh * rates[:, 0] + completion * rates[:, 1]
    cost += np.where(cached > 0, cached * rates[:, 2], 0.0)
    cost += np.where(written > 0, written * rates[:, 3], 0.0)
    return cost / 1e6
