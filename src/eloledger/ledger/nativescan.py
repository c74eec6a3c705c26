"""The fast path's first try: plain batches scanned in C straight into columns.

:mod:`eloledger.ledger._linescan` (compiled at install; optional) reads the fields the msgspec
tight decoder would read, with the same JSON keys (``swaps`` included), and refuses anything
that is not plain: then :func:`scan_columns` returns None and the caller decodes the batch
the msgspec way. The columns are finished here by :mod:`columns`' own rules (count checks,
inferred totals, usage source, status, role), so a batch gives the same columns either way
(``tests/test_native_scan.py`` compares them on generated and hostile lines).

``ELOLEDGER_NATIVE=0`` turns it off (:mod:`eloledger.native`).
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any

import numpy as np

from eloledger import native
from eloledger.ledger.columns import (
    _TOKEN_GROUP,
    _TRUTHY_COLUMNS,
    COUNT_FIELDS,
    FACTOR_COLUMNS,
    NUMBER_COLUMNS,
    Columns,
    Factor,
    Swaps,
    _counts_needed,
    _field_type,
    _fill_missing,
    _usage_source,
    checked_counts,
    status_from_literals,
    struct_fields,
)

try:
    from eloledger.ledger import _linescan
except ImportError:  # built without a C compiler: the msgspec path does everything
    _linescan = None

_NUMBERS = frozenset(NUMBER_COLUMNS) - {"passed", *_TRUTHY_COLUMNS}

Spec = tuple[tuple[str, ...], tuple[bytes, ...], bytes, tuple[Any, ...]]
_SPECS: dict[tuple[tuple[str, ...], Swaps], Spec | None] = {}


def available() -> bool:
    """Whether the scanner is built and not turned off."""
    return _linescan is not None and native.enabled()


def scan_columns(batch: Any, names: Sequence[str], swaps: Swaps) -> tuple[Columns, int] | None:
    """The columns ``names`` of a batch of whole lines and its row count, or None when the
    scanner is not there, cannot build these columns, or the batch is not plain."""
    if not available():
        return None
    spec = _spec(tuple(names), swaps)
    if spec is None:
        return None
    fields, keys, kinds, allowed = spec
    scanned = _linescan.scan(batch, keys, kinds, allowed)
    if scanned is None:
        return None
    rows, parts = scanned
    raw = {}
    for field, kind, part in zip(fields, kinds.decode(), parts, strict=True):
        raw[field] = _column(kind, part)
    return _finish(raw, tuple(names)), rows


def _spec(names: tuple[str, ...], swaps: Swaps) -> Spec | None:
    """(struct fields, their JSON keys, kinds, allowed literals) as the tight decoder reads
    them (:func:`columns.row_decoder`), or None for columns the scanner does not build."""
    key = (names, swaps)
    if key not in _SPECS:
        _SPECS[key] = _build_spec(names, swaps)
    return _SPECS[key]


def _build_spec(names: tuple[str, ...], swaps: Swaps) -> Spec | None:
    """One kind per struct field, from the type the tight decoder gives it
    (:func:`columns._field_type`), and for its ``Any`` fields from the column they build."""
    rename = {a: b for pair in swaps for a, b in (pair, pair[::-1])}
    fields = struct_fields(names)
    kinds, allowed = [], []
    for field in fields:
        decoded, literal = _field_type(field, tight=True), None
        if decoded is None:
            kind = "g"  # an alias or nested usage: the tight decoder requires null
        elif decoded == float | None:
            kind = "n"
        elif decoded is not Any:
            kind, literal = "l", _literal_values(decoded)
        elif field not in names:
            kind = "p"  # read only for whether it is set (error, error_class)
        elif field == "passed":
            kind = "b"
        elif field in _TRUTHY_COLUMNS:
            kind = "t"
        elif field in FACTOR_COLUMNS:
            kind = "f"
        elif field in _NUMBERS:
            kind = "n"
        else:
            return None
        kinds.append(kind)
        allowed.append(literal)
    keys = tuple(rename.get(f, f).encode() for f in fields)
    return fields, keys, "".join(kinds).encode(), tuple(allowed)


def _literal_values(decoded: Any) -> tuple[bytes, ...]:
    """What a tight literal type allows: ``Literal["ok", "error"] | None`` -> ok, error."""
    literal = typing.get_args(decoded)[0]
    return tuple(value.encode() for value in typing.get_args(literal))


def _column(kind: str, part: Any) -> Any:
    """A scanned column as the msgspec path types it (None for a guard field)."""
    if kind in "fl":
        codes, levels = part
        return Factor(np.frombuffer(codes, dtype=np.int32), levels)
    if kind == "n":
        return np.frombuffer(part, dtype=np.float64)
    if kind == "p":
        return np.frombuffer(part, dtype=np.bool_)
    if kind == "t":
        return np.frombuffer(part, dtype=np.uint8).astype(np.float64)  # as columns._truthy
    if kind == "b":
        return np.frombuffer(part, dtype=np.float64)
    return None


def _finish(raw: dict[str, Any], names: tuple[str, ...]) -> Columns:
    """:func:`columns.columns_from_structs`' rules for tight rows, on scanned columns."""
    wanted = set(names)
    out: Columns = {}
    if wanted & _TOKEN_GROUP:
        counts = checked_counts({name: raw[name] for name in _counts_needed(wanted)})
        for name in COUNT_FIELDS:
            if name in wanted:
                out[name] = counts[name]
        if "usage_source" in wanted:
            out["usage_source"] = _usage_source(raw["usage_source"], counts)
    for name in names:
        if name in out:
            continue
        if name == "status":
            out[name] = status_from_literals(raw["status"], lambda idx: _carry_errors(raw, idx))
        elif name == "role":
            out[name] = _fill_missing(raw["role"], "sample")
        else:
            out[name] = raw[name]
    return {name: out[name] for name in names}


def _carry_errors(raw: dict[str, Any], idx: np.ndarray) -> np.ndarray:
    """Whether each row of ``idx`` has an ``error`` or ``error_class`` that is not null."""
    carry = np.zeros(len(idx), dtype=bool)
    for field in ("error", "error_class"):
        column = raw[field]
        carry |= column.codes[idx] >= 0 if isinstance(column, Factor) else column[idx]
    return carry
