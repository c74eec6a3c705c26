"""Vectorised splitting and factorising of simple CSV bytes (no quotes) with numpy.

Why: a million-row comparisons file would otherwise become four million Python ``bytes``
objects and four million dict look-ups. Here the separators are found with one comparison
over the buffer, every field is copied into a fixed-width row of 64-bit words, and the rows
are grouped through a hash table whose hash is seeded afresh on every call, so nobody can
write names that collide on purpose. The result is exact and does not depend on the seed:
every row is compared word for word with its bucket's owner, and rows that share a bucket
with another value are grouped by an exact sort. Only fields longer than ``MAX_WIDTH`` or
ragged rows return ``None`` (the caller then takes the careful path).
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

import numpy as np

MAX_WIDTH = 64  # bytes; longer fields go the careful way
_PAD = MAX_WIDTH + 8  # spare zero bytes after the body, so every field's words can be read
# _WORD_MASK[c][n]: the bytes of word c that belong to a field n bytes long (low bytes set)
_WORD_MASK = np.array(
    [[(1 << (8 * min(8, max(0, n - 8 * c)))) - 1 for n in range(MAX_WIDTH + 1)] for c in range(8)],
    dtype=np.uint64,
)
_SKETCH_BITS = 16  # the bitmap that estimates how many distinct values there are


@dataclass
class FactorWork:
    """What one :func:`factorize` call did: ``rows`` hashed, ``sorted_rows`` that shared a
    bucket with another value and were grouped by the exact sort instead, ``buckets`` in the
    table. Crafted names cannot make ``sorted_rows`` larger than ordinary names do."""

    rows: int = 0
    sorted_rows: int = 0
    buckets: int = 0


@dataclass(frozen=True)
class Fields:
    """Where every field of a CSV body lies: ``starts``/``ends`` (rows × columns) index
    ``buf``, a copy of the body followed by ``MAX_WIDTH`` zero bytes. ``nul``: the body holds
    a NUL byte (then zero padding alone cannot tell "a" from "a\\0")."""

    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    nul: bool


def split_fields(body: bytes, ncol: int) -> Fields | None:
    """Every field of ``body`` (no header, no trailing newline, no quotes), or None when a
    line does not have exactly ``ncol`` fields (a blank line, a ragged row)."""
    size = len(body)
    buf = np.empty(size + _PAD, dtype=np.uint8)
    buf[:size] = np.frombuffer(body, dtype=np.uint8)
    buf[size:] = 0
    data = buf[:size]
    newline = data == 10
    mask = data == 44  # ','
    mask |= newline
    seps = np.flatnonzero(mask)
    total = seps.size + 1
    if total % ncol:
        return None
    nrows = total // ncol
    # Exactly the last field of every row ends at a newline: the newlines are as many as the
    # row breaks, and every ncol-th separator is one of them.
    breaks = np.count_nonzero(newline)
    if breaks != nrows - 1 or not (data[seps[ncol - 1 :: ncol]] == 10).all():
        return None
    starts = np.empty(total, dtype=np.int64)
    starts[0] = 0
    np.add(seps, 1, out=starts[1:])
    ends = np.empty(total, dtype=np.int64)
    ends[:-1] = seps
    ends[-1] = size
    nul = b"\x00" in body
    return Fields(buf, starts.reshape(nrows, ncol), ends.reshape(nrows, ncol), nul)


def factorize(
    fields: Fields,
    columns: list[int],
    *,
    seed: int | None = None,
    work: FactorWork | None = None,
) -> tuple[np.ndarray, list[bytes]] | None:
    """Codes (int64, in order of first appearance, row by row) and the distinct values of the
    fields in ``columns`` (several columns share one set of codes), or None when a field is
    longer than ``MAX_WIDTH``. ``seed`` fixes the hash (tests; by default it is random, and
    the result never depends on it); ``work`` receives the counts."""
    buf = fields.buf
    if columns == list(range(columns[0], columns[-1] + 1)):  # a slice copies faster
        columns = slice(columns[0], columns[-1] + 1)
    starts = fields.starts[:, columns].ravel()
    lengths = fields.ends[:, columns].ravel()
    lengths -= starts
    m = lengths.size
    if m == 0:
        return np.zeros(0, dtype=np.int64), []
    widest = int(lengths.max())
    if widest > MAX_WIDTH:
        return None
    keys = _keys(buf, starts, lengths, widest, fields.nul)
    seed = secrets.randbits(64) if seed is None else seed
    group, sorted_rows, buckets = _groups(keys, seed)
    if work is not None:
        work.rows, work.sorted_rows, work.buckets = m, sorted_rows, buckets
    first = np.full(int(group.max()) + 1, m, dtype=np.int64)
    np.minimum.at(first, group, np.arange(m))
    used = np.flatnonzero(first < m)
    firsts = first[used]
    order = np.argsort(firsts)  # distinct first rows: no ties, any sort is stable enough
    code_of = np.empty(first.size, dtype=np.int64)
    code_of[used[order]] = np.arange(used.size)
    spans = zip(starts[firsts[order]].tolist(), lengths[firsts[order]].tolist(), strict=True)
    values = [buf[s : s + n].tobytes() for s, n in spans]
    return code_of[group], values


def _keys(
    buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, widest: int, nul: bool
) -> list[np.ndarray]:
    """Each field as 64-bit words with the bytes past its end zeroed: equal keys iff equal
    fields. With no NUL byte in the data the zero padding already tells the lengths apart;
    otherwise the length is a key too (folded into the last word's spare top byte if free)."""
    nwords = max(1, (widest + 7) // 8)
    cell = np.ndarray(
        shape=(buf.size - 8 * nwords + 1,), dtype=f"V{8 * nwords}", buffer=buf, strides=(1,)
    )
    words = cell[starts].view("<u8").reshape(-1, nwords)  # one copy of every field, aligned
    keys = []
    for c in range(nwords):
        word = np.ascontiguousarray(words[:, c]) if nwords > 1 else words[:, 0]
        word &= _WORD_MASK[c][lengths]
        keys.append(word)
    if nul:
        size = lengths.astype(np.uint64)
        if widest - 8 * (nwords - 1) < 8:  # the last word's top byte is always zero: room
            keys[-1] |= size << np.uint64(56)
        else:
            keys.append(size)
    return keys


def _mix(h: np.ndarray, scratch: np.ndarray) -> None:
    """murmur3's 64-bit finaliser, in place: a bijection whose bits all depend on every input
    bit (so a seed xored in before it decides every bucket)."""
    shift = np.uint64(33)
    for multiplier in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        np.right_shift(h, shift, out=scratch)
        h ^= scratch
        h *= np.uint64(multiplier)
    np.right_shift(h, shift, out=scratch)
    h ^= scratch


def _hash(keys: list[np.ndarray], seed: int) -> np.ndarray:
    """A seeded hash of every row's keys: each word goes through the finaliser in turn, so
    no difference between two names cancels out whatever the seed (as with xor-multiply)."""
    h = keys[0] ^ np.uint64(seed)
    scratch = np.empty_like(h)
    _mix(h, scratch)
    for key in keys[1:]:
        h ^= key
        _mix(h, scratch)
    return h


def _table_bits(h: np.ndarray) -> int:
    """Buckets for about 32 per distinct value (so few values share one), from a bitmap
    sketch of how many distinct hashes there are (linear counting), at most 2^24."""
    m = h.size
    most = int(min(24, max(10, math.ceil(math.log2(4 * m)))))
    sketch = np.zeros(1 << _SKETCH_BITS, dtype=np.bool_)
    sketch[(h >> np.uint64(64 - _SKETCH_BITS)).astype(np.intp)] = True
    filled = int(np.count_nonzero(sketch)) / sketch.size
    if filled > 0.5:
        return most
    distinct = -sketch.size * math.log1p(-filled)
    return int(min(most, max(10, math.ceil(math.log2(32 * distinct + 1)))))


def _groups(keys: list[np.ndarray], seed: int) -> tuple[np.ndarray, int, int]:
    """A group number for every row (equal keys, equal numbers), how many rows the exact sort
    grouped, and the table's size.

    Every row writes its number into its bucket; whichever write lands, the bucket's owner is
    one of its own rows. Rows equal to their bucket's owner take the bucket's number; the rest
    (values that share a bucket with another value: a few, since the seeded hash spreads
    values evenly whatever they are) are grouped by sorting their keys."""
    m = keys[0].size
    h = _hash(keys, seed)
    bits = _table_bits(h)
    bucket = (h >> np.uint64(64 - bits)).astype(np.intp)
    table = np.zeros(1 << bits, dtype=np.int32 if m < 2**31 else np.int64)
    table[bucket] = np.arange(m, dtype=table.dtype)
    same = np.ones(m, dtype=np.bool_)
    owner = table[bucket] if 2 * table.size > m else None
    for key in keys:  # a small table is gathered per bucket, a large one per row
        same &= key == (key[table][bucket] if owner is None else key[owner])
    group = bucket  # intp: the bucket numbers become the group numbers (no copy)
    rest = np.flatnonzero(~same)
    if rest.size:
        group[rest] = table.size + _sort_groups([key[rest] for key in keys])
    return group, int(rest.size), table.size


def _sort_groups(keys: list[np.ndarray]) -> np.ndarray:
    """Group numbers from an exact sort of the keys (no hash involved)."""
    order = np.lexsort(keys[::-1])
    new = np.zeros(order.size, dtype=np.bool_)
    new[0] = True
    for key in keys:
        ordered = key[order]
        new[1:] |= ordered[1:] != ordered[:-1]
    out = np.empty(order.size, dtype=np.int64)
    out[order] = np.cumsum(new) - 1
    return out
