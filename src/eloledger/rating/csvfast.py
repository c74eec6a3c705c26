"""Vectorised splitting and factorising of simple CSV bytes (no quotes) with numpy.

Why: a million-row comparisons file would otherwise become four million Python ``bytes``
objects and four million dict look-ups. Here the separators are found with one comparison
over the buffer, every field is copied into a fixed-width row of a small byte matrix, the
rows are hashed word by word and factorised with ``np.unique``. The result is exact: every
field is checked against the representative of its hash group, and any surprise (a hash
collision, a field longer than ``MAX_WIDTH``, ragged rows) returns ``None`` so the caller can
take the careful path instead.
"""

from __future__ import annotations

import math

import numpy as np

MAX_WIDTH = 64  # bytes; longer fields go the careful way
_MIX = np.uint64(0x9E3779B97F4A7C15)
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # k low bytes set


def split_fields(body: bytes, ncol: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(buffer, starts, ends) with starts/ends shaped rows × ncol, or None when the rows are
    ragged. ``body`` has no header, no trailing newline, no blank lines and no quotes."""
    buf = np.zeros(len(body) + MAX_WIDTH + 8, dtype=np.uint8)  # spare bytes for factorize
    buf[: len(body)] = np.frombuffer(body, dtype=np.uint8)
    data = buf[: len(body)]
    mask = data == 44  # ','
    mask |= data == 10  # '\n'
    seps = np.flatnonzero(mask)
    total = seps.size + 1
    if total % ncol:
        return None
    nrows = total // ncol
    ends = np.append(seps, data.size)
    line_end = np.append(buf[seps] == 10, True).reshape(nrows, ncol)
    # Exactly the last field of every row ends at a newline.
    if not line_end[:, -1].all() or line_end[:, :-1].any():
        return None
    starts = np.concatenate(([0], seps + 1))
    return buf, starts.reshape(nrows, ncol), ends.reshape(nrows, ncol)


def factorize(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, list[bytes]] | None:
    """Codes (int64, in order of first appearance) and the distinct field values, or None.

    ``buf`` must be followed by at least ``MAX_WIDTH`` spare bytes (``split_fields`` pads it).
    """
    return factorize_numpy(buf, starts.ravel(), ends.ravel())


def factorize_numpy(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, list[bytes]] | None:
    """:func:`factorize` with numpy: hashes, a bucket table and a verifying sort."""
    lengths = ends - starts
    m = lengths.size
    if m == 0:
        return np.zeros(0, dtype=np.int64), []
    widest = int(lengths.max())
    if widest > MAX_WIDTH:
        return None
    width = max(8, (widest + 7) // 8 * 8)
    grid = np.lib.stride_tricks.sliding_window_view(buf, width)[starts]  # rows × width copy
    words = grid.view(np.uint64)
    for c in range(words.shape[1]):  # zero the bytes past each field's end (little endian)
        keep = lengths - 8 * c
        np.maximum(keep, 0, out=keep)
        np.minimum(keep, 8, out=keep)
        words[:, c] &= _LOW_BYTES[keep]
    # Up to 7 bytes, value and length fit one word and the (bijective) mix keeps it exact.
    exact = widest <= 7
    with np.errstate(over="ignore"):
        if exact:
            h = words[:, 0] | (lengths.astype(np.uint64) << np.uint64(56))
        else:
            h = lengths.astype(np.uint64)
            for c in range(words.shape[1]):
                h = (h ^ words[:, c]) * _MIX
        h = _finalise(h)
    rep = _representatives(h, None if exact else words, lengths)
    if rep is None:
        return None
    first = np.full(m, m, dtype=np.int64)
    np.minimum.at(first, rep, np.arange(m))
    reps = np.flatnonzero(first < m)  # one canonical row per distinct value
    firsts = first[reps]
    order = np.argsort(firsts, kind="stable")
    code_of = np.empty(m, dtype=np.int64)
    code_of[reps[order]] = np.arange(reps.size)
    values = [buf[starts[f] : ends[f]].tobytes() for f in firsts[order]]
    return code_of[rep], values


def _finalise(h: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finaliser: a bijection whose top bits depend on every input bit."""
    h = h ^ (h >> np.uint64(33))
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def _representatives(
    h: np.ndarray, words: np.ndarray | None, lengths: np.ndarray
) -> np.ndarray | None:
    """For every row, the index of a row holding the same value (the same one for equal values).

    A table indexed by the top bits of the hash gives every bucket one representative row in
    O(n) (no sort); rows that differ from their bucket's representative (bucket collisions)
    are grouped by a sort over just those rows. ``words`` None means h is exact (injective);
    otherwise every grouping is verified byte for byte.
    """
    m = h.size
    bits = int(min(24, max(16, math.ceil(math.log2(4 * m)))))
    key = (h >> np.uint64(64 - bits)).astype(np.intp)
    table = np.empty(1 << bits, dtype=np.int32 if m < 2**31 else np.int64)
    table[key] = np.arange(m)  # whichever write lands, the bucket gets one of its own rows
    rep = table[key].astype(np.int64)
    same = h == h[rep]
    if words is not None:
        same &= _same(words, lengths, rep)
    bad = np.flatnonzero(~same)
    if bad.size:
        first, inverse = _unique(h[bad])
        sub = bad[first[inverse]]
        if words is not None and not _same(words[bad], lengths[bad], sub, words, lengths).all():
            return None  # a full 64-bit hash collision: let the caller take the careful path
        rep[bad] = sub
    return rep


def _same(words, lengths, rep, ref_words=None, ref_lengths=None) -> np.ndarray:
    """Row k equals row ``rep[k]`` of the reference, byte for byte and in length."""
    ref_words = words if ref_words is None else ref_words
    ref_lengths = lengths if ref_lengths is None else ref_lengths
    out = lengths == ref_lengths[rep]
    for c in range(words.shape[1]):
        out &= words[:, c] == ref_words[rep, c]
    return out


def _unique(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of each distinct value's first occurrence, group of every element), with an
    unstable quicksort (``np.unique(return_index=True)`` insists on a slower stable sort)."""
    perm = np.argsort(h)
    hs = h[perm]
    new = np.empty(hs.size, dtype=bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    heads = np.flatnonzero(new)
    first = np.minimum.reduceat(perm, heads)
    inverse = np.empty(h.size, dtype=np.int64)
    inverse[perm] = np.cumsum(new) - 1
    return first, inverse
