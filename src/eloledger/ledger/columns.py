"""Columnar form of ledger rows: factorised text columns and float64 number columns.

Two builders produce the same columns: :func:`columns_from_rows` from canonical row dicts
(the exact, line-by-line path) and :func:`columns_from_structs` from rows decoded in bulk by
msgspec (the fast path). The fast path applies the rules of :mod:`canonical` column-wise; when
a chunk holds anything it cannot handle cheaply it raises :class:`NeedsExactPath` and the reader
falls back to the exact path, which also produces the precise ``file:line`` error.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

import msgspec
import numpy as np
import orjson

from eloledger.errors import UserError
from eloledger.ledger import canonical, schema
from eloledger.ledger.canonical import (
    COUNT_FIELDS,
    MAX_COUNT,
    check_count,
    fill_from_usage,
    id_string,
)

FACTOR_COLUMNS: tuple[str, ...] = (
    "arm",
    "task_id",
    "session",
    "model",
    "status",
    "role",
    "error_class",
    "usage_source",
    "run_id",
    "project",
    "source",
    "sandbox",  # judged rows: bwrap | none (elo --ledger names unsandboxed arms)
    "direction",  # a scored task's rows: max | min (no pass/fail; min: lower is better)
)
NUMBER_COLUMNS: tuple[str, ...] = (
    *COUNT_FIELDS,
    "latency_ms",
    "ttft_ms",
    "score",
    "passed",  # 1.0 / 0.0 / NaN (unknown)
    "will_retry",  # 1.0 when the runner retries this error row, else 0.0
    "sample",
    "attempt",
    "http_status",
    "ts",
    "cache_write_tokens",
    "round",
    "agent",  # 1.0 when the row names an agent CLI (judgeable agent errors), else 0.0
)
_TRUTHY_COLUMNS = ("will_retry", "agent", "model_answered")
ALL_COLUMNS: tuple[str, ...] = FACTOR_COLUMNS + NUMBER_COLUMNS
# What summaries and arm costs read: decoding fewer fields is much faster.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "arm",
    "task_id",
    "status",
    "role",
    "usage_source",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
)
PRICE_COLUMNS: tuple[str, ...] = ("model", "cached_tokens", "cache_write_tokens")
COST_COLUMNS: tuple[str, ...] = (*SUMMARY_COLUMNS, "session", "passed", "score", "will_retry")

_TOKEN_GROUP = frozenset((*COUNT_FIELDS, "usage_source"))
_ALIASES_OF: dict[str, tuple[str, ...]] = {}
for _alias, _name in canonical.ALIASES.items():
    _ALIASES_OF.setdefault(_name, ())
    _ALIASES_OF[_name] += (_alias,)


class NeedsExactPath(Exception):
    """The fast path met something only the line-by-line path handles (or reports) exactly."""


@dataclass
class Factor:
    """A text column as integer codes into ``levels`` (-1 = missing), in first-seen order."""

    codes: np.ndarray
    levels: list[str]

    def __len__(self) -> int:
        return len(self.codes)

    def code(self, level: str) -> int:
        """The code of ``level``, or -1 when it never occurs."""
        try:
            return self.levels.index(level)
        except ValueError:
            return -1

    def values(self) -> list[str | None]:
        lookup = [*self.levels, None]
        return [lookup[c] for c in self.codes.tolist()]

    def take(self, rows: np.ndarray) -> Factor:
        """This column at ``rows``, its levels those rows hold in the order they first
        appear (as if the rows were factorised alone)."""
        codes = self.codes[rows]
        held, first = np.unique(codes[codes >= 0], return_index=True)
        order = held[np.argsort(first, kind="stable")]
        remap = np.full(len(self.levels) + 1, -1, dtype=codes.dtype)  # the last slot: missing
        remap[order] = np.arange(len(order))
        return Factor(remap[codes], [self.levels[c] for c in order.tolist()])

    def mask(self, *levels: str) -> np.ndarray:
        """Boolean array: rows whose value is one of ``levels``."""
        wanted = [self.code(level) for level in levels]
        wanted = [c for c in wanted if c >= 0]
        if not wanted:
            return np.zeros(len(self.codes), dtype=bool)
        return np.isin(self.codes, wanted)


Columns = dict[str, Any]  # name -> Factor | np.ndarray


# --------------------------------------------------------------------------- shared helpers


def factorize(values: Sequence[Any]) -> Factor:
    """Codes for any hashable values; None is missing; levels become strings (17 -> "17")."""
    return factorize_stream(values, len(values))


def factorize_stream(values: Iterable[Any], n: int) -> Factor:
    """:func:`factorize` of ``n`` values in one pass, without a list of them.

    A defaultdict whose factory is its own length hands out codes 0, 1, 2, ... in first-seen
    order, so the levels come out in the same order as ``dict.fromkeys`` would give them.
    """
    return _relevel(*_raw_codes(values, n))


def _raw_codes(values: Iterable[Any], n: int) -> tuple[np.ndarray, list[Any]]:
    """Codes and the distinct values as they are (not yet made strings), in one pass."""
    index: defaultdict[Any, int] = defaultdict()
    index.default_factory = index.__len__
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=n)
    return codes, list(index)


def joint_factorize(rows: Sequence[Any], fields: Sequence[str]) -> dict[str, Factor]:
    """Factorise several columns of few values each (arm, role, status, ...) in one pass.

    One tuple per row is hashed once instead of one lookup per row and column; each column's
    codes then come from the few distinct tuples. A value's first row is also the first row
    of its first tuple, so every column's levels keep their first-seen order. (Columns with
    many values, like task_id, make many tuples: factorise those on their own.)
    """
    # The guides' rows name no role, status or source: a look at each of those fields costs
    # less than a tuple a row (1.0 against 1.3 ms a batch).
    unset = [f for f in fields if getattr(rows[0], f) is None] if rows else []
    if unset and not any(_any_set(rows, [f]) for f in unset):
        out = {f: Factor(np.full(len(rows), -1, dtype=np.int32), []) for f in unset}
        rest = [f for f in fields if f not in unset]
        if len(rest) == 1:
            out[rest[0]] = factorize_stream(map(attrgetter(rest[0]), rows), len(rows))
        elif rest:
            out |= joint_factorize(rows, rest)
        return {f: out[f] for f in fields}
    codes, combos = _raw_codes(map(attrgetter(*fields), rows), len(rows))
    out = {}
    for j, field in enumerate(fields):
        part = factorize([combo[j] for combo in combos])
        out[field] = Factor(part.codes[codes], part.levels)
    return out


def _relevel(codes: np.ndarray, raw_levels: list[Any]) -> Factor:
    """Map raw levels to strings (merging e.g. 17 and "17") and None to -1."""
    if None not in raw_levels and all(type(v) is str for v in raw_levels):
        return Factor(codes, raw_levels)  # the usual case: nothing to map
    levels: list[str] = []
    where: dict[str, int] = {}
    remap = np.empty(len(raw_levels) + 1, dtype=np.int32)
    for i, raw in enumerate(raw_levels):
        if raw is None:
            remap[i] = -1
            continue
        text = raw if isinstance(raw, str) else id_string(raw)
        if text not in where:
            where[text] = len(levels)
            levels.append(text)
        remap[i] = where[text]
    remap[-1] = -1
    return Factor(remap[codes], levels)


def to_float(values: Sequence[Any]) -> np.ndarray:
    """float64 column; None and anything not a number become NaN (bools count as 0/1)."""
    if isinstance(values, list) and values.count(None) == len(values):
        return np.full(len(values), np.nan)  # a field no row has: np.array of Nones is 80x slower
    try:
        column = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        column = None
    if column is None or column.ndim != 1:  # lists of equal length make a 2-D array: not numbers
        return np.fromiter(map(_one_float, values), dtype=np.float64, count=len(values))
    return column


def _one_float(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    return float("nan")


def concat(chunks: Sequence[Columns], names: Iterable[str]) -> Columns:
    """Join column chunks, merging factor levels."""
    out: Columns = {}
    for name in names:
        parts = [c[name] for c in chunks]
        if isinstance(parts[0], Factor):
            out[name] = _concat_factors(parts)
        else:
            out[name] = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return out


def _concat_factors(parts: Sequence[Factor]) -> Factor:
    if len(parts) == 1:
        return parts[0]
    levels: list[str] = []
    where: dict[str, int] = {}
    coded = []
    for part in parts:
        remap = np.empty(len(part.levels) + 1, dtype=np.int32)
        for i, level in enumerate(part.levels):
            if level not in where:
                where[level] = len(levels)
                levels.append(level)
            remap[i] = where[level]
        remap[-1] = -1
        coded.append(remap[part.codes])
    return Factor(np.concatenate(coded), levels)


# --------------------------------------------------------------------------- exact path


def columns_from_rows(rows: Sequence[dict[str, Any]], names: Iterable[str]) -> Columns:
    """Columns from canonical row dicts (already validated by :func:`canonical.canonicalize`)."""
    out: Columns = {}
    for name in names:
        values = [r.get(name) for r in rows]
        if name in FACTOR_COLUMNS:
            out[name] = factorize(values)
        elif name in _TRUTHY_COLUMNS:
            out[name] = np.array([bool(v) for v in values], dtype=np.float64)
        else:
            out[name] = to_float(values)
    return out


# --------------------------------------------------------------------------- fast path


def struct_fields(names: Iterable[str]) -> tuple[str, ...]:
    """The raw JSON fields the fast path must decode to build ``names``."""
    wanted = set(names)
    fields: list[str] = []

    def add(*more: str) -> None:
        fields.extend(f for f in more if f not in fields)

    if wanted & _TOKEN_GROUP:
        for name in _counts_needed(wanted):
            add(name, *_ALIASES_OF.get(name, ()))
        add("usage", "usageMetadata", "usage_source")
    if "status" in wanted:
        add("status", "error", "error_class")
    for name in wanted - _TOKEN_GROUP:
        add(name, *_ALIASES_OF.get(name, ()))
    return tuple(fields)


_STRUCT_CACHE: dict[tuple[Any, ...], Any] = {}
# The usual values, decoded without allocating a string per row; others use the loose decoder.
_LITERALS: dict[str, Any] = {
    "role": Literal[schema.ROLES] | None,
    "status": Literal["ok", "error"] | None,
    "usage_source": Literal["server", "estimated", "missing"] | None,
}


def row_decoder(
    names: Iterable[str], *, tight: bool = True, swaps: Swaps = ()
) -> msgspec.json.Decoder:
    """A msgspec decoder for just the fields needed (unknown keys are skipped unparsed).

    ``tight`` decodes role/status/usage_source as literals (faster); a ledger with other values
    fails validation and is decoded again loosely. ``swaps`` (canonical, alias) pairs (see
    :func:`alias_swaps`) read the alias's key into the canonical field, and the canonical key
    into the alias field, which must then be null: a ledger written with the guides' names
    (``strategy``, ``input_tokens``) decodes as tightly as a canonical one, and a row that uses
    both names fails validation and goes the loose way, which merges them exactly.
    """
    fields = tuple(sorted(struct_fields(names), key=_writer_position))
    key = (fields, tight, swaps)
    decoder = _STRUCT_CACHE.get(key)
    if decoder is None:
        spec = [(f, _field_type(f, tight), None) for f in fields]
        rename = {a: b for pair in swaps for a, b in (pair, pair[::-1])}
        row_type = msgspec.defstruct("_LedgerRow", spec, gc=False, rename=rename or None)
        decoder = _STRUCT_CACHE[key] = msgspec.json.Decoder(row_type)
    return decoder


Swaps = tuple[tuple[str, str], ...]


def alias_swaps(first_line: bytes, names: Iterable[str]) -> Swaps:
    """(canonical, alias) pairs for the fields a ledger names the other tools' way.

    Judged from one line (the first of a chunk); a line that does not parse gives no swaps.
    """
    try:
        keys = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        return ()
    if not isinstance(keys, dict):
        return ()
    swaps = []
    for name, aliases in _aliased_fields(tuple(names)):
        used = [a for a in aliases if a in keys]
        if name not in keys and len(used) == 1:
            swaps.append((name, used[0]))
    return tuple(swaps)


def batch_swaps(data: Any, names: Iterable[str]) -> Swaps:
    """:func:`alias_swaps` of a batch's first line (read from its first 64 KB)."""
    return alias_swaps(bytes(data[: 1 << 16]).split(b"\n", 1)[0], names)


@functools.cache
def _aliased_fields(names: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The fields :func:`alias_swaps` looks at, each with its aliases (asked once a file: a
    folder of 8,000 small ledgers asked 8,000 times)."""
    return tuple((f, _ALIASES_OF[f]) for f in struct_fields(names) if _ALIASES_OF.get(f))


_WRITER_POSITION = {name: i for i, name in enumerate(schema.FIELDS)}


def _writer_position(field: str) -> int:
    """Struct fields in the order writers emit them: msgspec then finds each key at once
    (it looks for the next key after the last one matched); aliases go last."""
    return _WRITER_POSITION.get(field, len(_WRITER_POSITION))


def _field_type(field: str, tight: bool) -> Any:
    if tight and field in _RARE_FIELDS:
        return None  # an alias or nested usage fails validation: decoded again loosely
    counts = set(COUNT_FIELDS) | {a for n in COUNT_FIELDS for a in _ALIASES_OF.get(n, ())}
    if field in counts or field == "score":
        return float | None  # ints accepted; strings, bools and objects fail over to exact
    if tight and field in _LITERALS:
        return _LITERALS[field]
    if tight and field in FACTOR_COLUMNS:
        return str | None  # a number here goes the loose way (see _as_id)
    return Any


def columns_from_structs(structs: list[Any], names: Iterable[str], *, tight: bool) -> Columns:
    """Canonical columns from msgspec-decoded rows, rule by rule as in :mod:`canonical`.

    ``tight``: the rows came from the tight decoder, so no alias or nested usage is set.
    """
    names = tuple(names)
    raw: dict[str, list[Any]] = {}
    n = len(structs)
    fields = struct_fields(names)
    rare = [f for f in fields if f in _RARE_FIELDS]
    # One pass tells whether any alias or nested usage occurs at all (usually not).
    rare_present = bool(rare) and not tight and _any_set(structs, rare)

    def get(field: str) -> list[Any]:
        if field not in raw:
            if field in _RARE_FIELDS and not rare_present:
                raw[field] = [None] * n
            else:
                raw[field] = list(map(attrgetter(field), structs))
        return raw[field]

    def merged(name: str) -> list[Any]:
        values = get(name)
        if not rare_present:  # no alias is set anywhere: nothing to merge
            return values
        for alias in _ALIASES_OF.get(name, ()):
            other = get(alias)
            if other.count(None) != n:
                values = [v if v is not None else a for v, a in zip(values, other, strict=True)]
        return values

    wanted = set(names)
    joint = [f for f in _JOINT_COLUMNS if f in wanted]
    few: dict[str, Factor] = {}
    if tight and len(joint) > 1:  # tight: no alias is set, so the columns need no merging
        try:
            few = joint_factorize(structs, joint)
        except TypeError as exc:  # an object or array where an identifier belongs
            raise NeedsExactPath from exc

    def factor(name: str) -> Factor:
        """A factor column; straight from the rows (no list in between) when nothing merges."""
        if name in few:
            return few[name]
        if rare_present or name in raw:
            return _factor_or_exact(merged(name), tight=tight)
        column = map(attrgetter(name), structs)
        try:
            return factorize_stream(column if tight else map(_as_id, column), n)
        except TypeError as exc:  # an object or array where an identifier belongs
            raise NeedsExactPath from exc

    out: Columns = {}
    if wanted & _TOKEN_GROUP:
        counts = _count_columns(get, merged, _counts_needed(wanted))
        for name in COUNT_FIELDS:
            if name in wanted:
                out[name] = counts[name]
        if "usage_source" in wanted:
            out["usage_source"] = _usage_source(factor("usage_source"), counts)
    for name in names:
        if name in out:
            continue
        if name == "status":
            if tight:
                out[name] = _status_from_literals(factor("status"), structs)
            else:
                out[name] = _status(get("status"), structs)
        elif name == "role":
            out[name] = _fill_missing(factor("role"), "sample")
        elif name == "passed":
            out[name] = _passed(get("passed"))
        elif name in _TRUTHY_COLUMNS:
            out[name] = _truthy(get(name))
        elif name in FACTOR_COLUMNS:
            out[name] = factor(name)
        elif name == "ts":
            out[name] = _ts_column(merged("ts"))
        else:
            out[name] = to_float(get(name))
    return {name: out[name] for name in names}


def _ts_column(values: list[Any]) -> np.ndarray:
    """Unix seconds; ISO-8601 text as :func:`canonical.parse_ts` reads it (bad text: the
    exact path names the line)."""
    if values.count(None) == len(values) or str not in set(map(type, values)):
        return to_float(values)  # (a set of types: C speed, ~0.1 s per 1M rows)
    try:
        return to_float([canonical.parse_ts(v) for v in values])
    except UserError as exc:
        raise NeedsExactPath from exc


# Columns with few distinct values, factorised together on the tight path.
_JOINT_COLUMNS = ("arm", "role", "status", "usage_source")
_RARE_FIELDS = frozenset((*canonical.ALIASES, "usage", "usageMetadata"))


def _any_set(structs: Sequence[Any], fields: Sequence[str]) -> bool:
    getter = attrgetter(*fields)
    nothing = (None,) * len(fields) if len(fields) > 1 else None
    return list(map(getter, structs)).count(nothing) != len(structs)


def _counts_needed(wanted: set[str]) -> tuple[str, ...]:
    """Token counts to build: the ones asked for, plus the three that infer total and source."""
    return tuple(n for n in COUNT_FIELDS if n in wanted or n in COUNT_FIELDS[:3])


def _count_columns(get: Any, merged: Any, needed: tuple[str, ...]) -> dict[str, np.ndarray]:
    lists = {name: merged(name) for name in needed}
    for nested in ("usage", "usageMetadata"):
        values = get(nested)
        if values.count(None) == len(values):
            continue
        lists = {name: list(column) for name, column in lists.items()}  # own copies to fill
        for i, usage in enumerate(values):
            if not isinstance(usage, dict):
                continue
            row = {name: lists[name][i] for name in needed}
            fill_from_usage(row, usage)
            for name in needed:
                try:
                    lists[name][i] = check_count(row.get(name), name, "")
                except UserError as exc:
                    raise NeedsExactPath from exc
    counts = {}
    for name in needed:
        try:
            counts[name] = np.array(lists[name], dtype=np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise NeedsExactPath from exc
    return checked_counts(counts)


def checked_counts(counts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Token count columns (NaN: none) checked as :func:`canonical.check_count` would, and a
    missing total inferred from prompt + completion."""
    for column in counts.values():
        if (column < 0).any() or np.isinf(column).any() or (column > MAX_COUNT).any():
            raise NeedsExactPath  # the exact path names the line
    total = counts["total_tokens"]
    infer = np.isnan(total)
    if infer.any():
        both = counts["prompt_tokens"] + counts["completion_tokens"]
        counts["total_tokens"] = np.where(infer, both, total)
    return counts


def _usage_source(factor: Factor, counts: dict[str, np.ndarray]) -> Factor:
    missing = factor.codes < 0
    if not missing.any():
        return factor
    known = ~(
        np.isnan(counts["prompt_tokens"])
        & np.isnan(counts["completion_tokens"])
        & np.isnan(counts["total_tokens"])
    )
    levels = list(factor.levels)
    codes = factor.codes.copy()
    for text, rows in (("server", missing & known), ("missing", missing & ~known)):
        if rows.any():
            if text not in levels:
                levels.append(text)
            codes[rows] = levels.index(text)
    return Factor(codes, levels)


def _status(status: list[Any], structs: list[Any]) -> Factor:
    uniq = list(dict.fromkeys(_hashable(status)))
    index = {v: i for i, v in enumerate(uniq)}
    codes = np.fromiter(map(index.__getitem__, status), dtype=np.int32, count=len(status))
    levels = ["ok", "error"]
    remap = np.array(
        [-1 if v is None else levels.index(canonical.normalize_status(v, None, None)) for v in uniq]
        + [-1],
        dtype=np.int32,
    )
    return _infer_unknown_status(remap[codes], lambda idx: _carry_errors(structs, idx))


def _status_from_literals(factor: Factor, structs: list[Any]) -> Factor:
    """Status from the tight decoder: levels are already "ok"/"error"; None is inferred."""
    return status_from_literals(factor, lambda idx: _carry_errors(structs, idx))


def status_from_literals(factor: Factor, carry_errors: Any) -> Factor:
    """The "ok"/"error" codes of literal levels; rows without a status failed when they carry
    an error, else succeeded (as canonical). ``carry_errors(rows)``: whether each of those
    rows has an ``error`` or ``error_class`` that is not null."""
    remap = np.array([("ok", "error").index(level) for level in factor.levels] + [-1])
    return _infer_unknown_status(remap[factor.codes].astype(np.int32), carry_errors)


def _carry_errors(structs: list[Any], idx: np.ndarray) -> np.ndarray:
    # (the guides' rows have no status: every row is asked, and needs no copy of the list)
    rows = structs if len(idx) == len(structs) else [structs[i] for i in idx.tolist()]
    return np.fromiter(
        ((r.error is not None or r.error_class is not None) for r in rows),
        dtype=bool,
        count=len(rows),
    )


def _infer_unknown_status(codes: np.ndarray, carry_errors: Any) -> Factor:
    unknown = codes < 0
    if unknown.any():
        idx = np.flatnonzero(unknown)
        codes[idx] = np.where(carry_errors(idx), 1, 0)
    return Factor(codes, ["ok", "error"])


def _passed(values: list[Any]) -> np.ndarray:
    uniq = list(dict.fromkeys(_hashable(values)))
    index = {v: i for i, v in enumerate(uniq)}
    lookup = []
    for value in uniq:
        try:
            checked = canonical.check_passed(value, "")
        except UserError as exc:
            raise NeedsExactPath from exc
        lookup.append(float("nan") if checked is None else float(checked))
    table = np.array(lookup, dtype=np.float64)
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    return table[codes]


def _truthy(values: list[Any]) -> np.ndarray:
    try:
        return np.fromiter(map(bool, values), dtype=bool, count=len(values)).astype(np.float64)
    except TypeError as exc:  # pragma: no cover - bool() of a JSON value never fails
        raise NeedsExactPath from exc


def _factor_or_exact(values: list[Any], *, tight: bool = True) -> Factor:
    try:
        return factorize(values if tight else list(map(_as_id, values)))
    except TypeError as exc:  # an object or array where an identifier belongs
        raise NeedsExactPath from exc


def _as_id(value: Any) -> Any:
    """An identifier as the text its level becomes (17 -> "17", what :func:`_relevel` gives),
    before it is a dict key: Python's hash of a number is not seeded, so numbers chosen to
    collide (k * (2**61 - 1)) would make factorising quadratic; a string's hash is seeded."""
    if type(value) is str or value is None:
        return value
    if isinstance(value, (dict, list)):
        raise TypeError("not an identifier")
    return id_string(value)


def _fill_missing(factor: Factor, default: str) -> Factor:
    missing = factor.codes < 0
    if not missing.any():
        return factor
    levels = list(factor.levels)
    if default not in levels:
        levels.append(default)
    codes = factor.codes.copy()
    codes[missing] = levels.index(default)
    return Factor(codes, levels)


def _hashable(values: list[Any]) -> list[Any]:
    """Raise NeedsExactPath when a value cannot be a dict key (an object or an array)."""
    try:
        dict.fromkeys(values)
    except TypeError as exc:
        raise NeedsExactPath from exc
    return values
