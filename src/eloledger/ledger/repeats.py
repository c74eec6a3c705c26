"""The duplicate rules over batches of ledger lines, keeping 8 bytes a distinct line or call.

Each row leaves behind only what the rules need to recognise a later repeat of it:

* its line: Python's seeded 64-bit hash (SipHash) of the stripped line, 8 bytes. A line whose
  hash was seen is left out at once; when the files are folded, :meth:`Repeats.settle` reads
  them again (only if anything was left out so), finds the first line with each such hash and
  checks every later one against it byte for byte, so a hash collision can only send the read
  to the exact path;
* with several files, its call identity (the tuple :func:`dedupe.identity` makes): its seeded
  hash, 8 bytes (none for the last file's calls: no later file can repeat them). A row whose
  call an earlier file recorded is left out at once; :meth:`Repeats.settle` reads the files
  again (only if that happened) and checks that every row with that hash records the same
  call.

The hashes are kept in sorted numpy runs split into buckets by the hash's top bits (merging a
bucket never copies the whole set). The rules are
:class:`eloledger.ledger.dedupe.DuplicateFinder`'s, applied in reading order: a line repeats the
first identical line anywhere; a call repeats the first call with its identity in an earlier
file. The warning is the same (count and first three pairs); only those three pairs are kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.ledger.batches import BATCH_BYTES, batch_lines, read_batches
from eloledger.ledger.columns import NeedsExactPath
from eloledger.ledger.dedupe import _SHOW, call_hashes, call_identities, duplicate_message
from eloledger.ledger.reader import MAX_DEPTH, _depth_over, _too_deep

_BUCKET_BITS = 4  # 16 buckets: merging the biggest run of one copies a sixteenth of the set
_SLICE = 1 << 18  # keys looked up at a time (a few MB of arrays for any number of keys)


class SeenKeys:
    """Distinct int64 keys (hashes) in sorted runs per bucket (the hash's top bits), a run
    merged with the one before once it is no smaller than half of it."""

    def __init__(self) -> None:
        self.runs: list[list[np.ndarray]] = [[] for _ in range(1 << _BUCKET_BITS)]
        self.size = 0

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """For each key, whether it was seen. A worker's millions of keys are looked up a
        slice at a time: the lookup's own arrays stay a few MB, not several times the keys."""
        found = np.zeros(len(keys), dtype=bool)
        if not self.size:
            return found
        for start in range(0, len(keys), _SLICE):
            order = start + np.argsort(keys[start : start + _SLICE])
            mine = keys[order]  # sorted: each bucket's keys in one piece, searched in order
            for b, runs in enumerate(self.runs):
                lo, hi = _bucket_span(mine, b) if runs else (0, 0)
                if lo == hi:
                    continue
                wanted, rows = mine[lo:hi], order[lo:hi]
                for run in runs:
                    at = np.minimum(np.searchsorted(run, wanted), len(run) - 1)
                    found[rows[run[at] == wanted]] = True
        return found

    def drain(self) -> np.ndarray:
        """Every key, sorted, the store emptied as they are copied out (a worker's keys go
        back to the parent: the peak is the keys once and a bucket, not the keys twice)."""
        out = np.empty(self.size, dtype=np.int64)
        at = 0
        half = 1 << (_BUCKET_BITS - 1)  # buckets with the sign bit set sort first as int64
        for b in [*range(half, 2 * half), *range(half)]:
            runs, self.runs[b] = self.runs[b], []
            while len(runs) > 1:
                runs.append(_merge(runs.pop(-2), runs.pop()))
            if runs:
                out[at : at + len(runs[0])] = runs[0]
                at += len(runs[0])
        self.size = 0
        return out[:at]

    def add(self, keys: np.ndarray) -> None:
        """Add keys not seen before (distinct among themselves too). Sorted as int64, a
        bucket's keys are one piece (buckets 8..15 hold the negative ones); a worker's keys
        come sorted already (:meth:`drain`), and are not copied to sort them."""
        if len(keys) > 1 and not bool((keys[1:] > keys[:-1]).all()):
            keys = np.sort(keys)
        for b in range(1 << _BUCKET_BITS):
            lo, hi = _bucket_span(keys, b)
            if lo == hi:
                continue
            runs = self.runs[b]
            runs.append(keys[lo:hi].copy())
            while len(runs) > 1 and len(runs[-2]) <= 2 * len(runs[-1]):
                runs.append(_merge(runs.pop(-2), runs.pop()))
        self.size += len(keys)


def _bucket_span(keys: np.ndarray, b: int) -> tuple[int, int]:
    """Where bucket ``b``'s keys are in ``keys`` (sorted as int64): ``[lo, hi)``."""
    shift = 64 - _BUCKET_BITS
    low = (b - (1 << _BUCKET_BITS) if b >= 1 << (_BUCKET_BITS - 1) else b) << shift
    lo = int(np.searchsorted(keys, low))
    if b == (1 << (_BUCKET_BITS - 1)) - 1:  # the largest positive keys: the end
        return lo, len(keys)
    return lo, int(np.searchsorted(keys, low + (1 << shift)))


def _merge(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two sorted runs with no key in common, as one sorted run."""
    at = np.searchsorted(a, b) + np.arange(len(b))
    from_a = np.ones(len(a) + len(b), dtype=bool)
    from_a[at] = False
    merged = np.empty(len(from_a), dtype=np.int64)
    merged[at] = b
    merged[from_a] = a
    return merged


def line_keys(lines: Sequence[bytes]) -> np.ndarray:
    """Python's seeded hash of each (stripped) line."""
    return np.fromiter(map(hash, lines), dtype=np.int64, count=len(lines))


def call_keys(hashes: np.ndarray) -> np.ndarray:
    """Calls' hashes (:func:`dedupe.call_hashes`), never 0 (0 marks "no call" in arrays)."""
    keys = hashes.copy()
    keys[keys == 0] = 1
    return keys


class Repeats:
    """The duplicate rules over batches of rows in reading order (see the module's doc).

    ``calls``: look for calls repeated across files (default: when there are several).
    ``last_file_calls``: keep the last file's calls too (a worker hands them back); otherwise
    no later file can repeat them, and they are not stored (two shards: half the store)."""

    def __init__(
        self, sources: Sequence[Path], *, calls: bool | None = None, last_file_calls: bool = False
    ) -> None:
        self.sources = [str(s) for s in sources]
        self.check_calls = len(self.sources) > 1 if calls is None else calls
        self.last_file_calls = last_file_calls
        self.lines = SeenKeys()  # only the hashes: a repeat's first line is found by settle()
        self.calls = SeenKeys()  # the earlier files' calls (hashes: confirmed by settle())
        self.file_seen = SeenKeys()  # the calls this file recorded first
        self.count = 0
        self.shown: list[tuple[int, int]] = []  # (repeat, first) places
        self.unplaced: dict[int, int] = {}  # shown index -> its line's hash (first: settle())
        self.unplaced_calls: dict[int, int] = {}  # shown index -> its call's hash
        self.pending: list[np.ndarray] = []  # hashes of lines repeated from an earlier batch
        self.pending_calls: list[np.ndarray] = []  # hashes of calls an earlier file recorded

    def where(self, place: int) -> str:
        return f"{self.sources[place >> 40]}:{place & _LINE_MASK}"

    def needed_later(self, source: int) -> bool:
        """Whether the keys of file ``source`` must be kept: a later file can repeat them
        (a worker keeps them anyway, to hand them back)."""
        return self.last_file_calls or source < len(self.sources) - 1

    def seen_before(self, data: bytes) -> bool:
        """Whether a line of ``data`` (whole lines), or one of its calls, was kept already:
        a cheap look before folding a file apart (no state changes)."""
        lines = list(map(bytes.strip, batch_lines(data)))
        if self.lines.lookup(line_keys(lines)).any():
            return True
        found = call_hashes(data, len(lines)) if self.check_calls else None
        if found is None:
            return False
        hashes, has = found
        return bool(self.calls.lookup(call_keys(hashes[has])).any())

    def remember_calls(self, keys: np.ndarray) -> None:
        """Keep this file's calls (hashes) for the files after it; once each."""
        new = np.unique(keys)
        self.file_seen.add(new[~self.file_seen.lookup(new)])

    def keep(self, source: int, first_line: int, data: bytes) -> np.ndarray:
        """The rows of ``data`` (whole lines, one row each, the first being line
        ``first_line`` of file ``source``) that repeat nothing seen before.

        A line whose hash an earlier batch had is left out at once; that it is byte for byte
        the same line (and which line it repeats) is settled by :meth:`settle` at the end."""
        raw = batch_lines(data)
        count = len(raw)
        bytes_ = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(bytes_ == 10)
        lines = raw if _unpadded(bytes_, ends) else list(map(bytes.strip, raw))
        _refuse_deep(self.sources[source], first_line, raw, bytes_, ends)
        places = (source << 40) + first_line + np.arange(count, dtype=np.int64)
        keys = line_keys(lines)
        first = _firsts(keys)
        inside = np.flatnonzero(first != np.arange(count))
        pairs = zip(inside.tolist(), first[inside].tolist(), strict=True)
        if any(lines[i] != lines[j] for i, j in pairs):
            raise NeedsExactPath  # two different lines share a 64-bit hash: be exact
        seen = self.lines.lookup(keys)
        if seen.any():
            self.pending.append(keys[seen])
        repeat_of = np.where(seen, -1, places[first])
        repeat = seen.copy()
        repeat[inside] = True
        self.lines.add(keys[~repeat])
        if self.check_calls:
            calls = self._calls(data, count, repeat, self.needed_later(source))
            repeat = repeat | (calls != 0)
            keys = np.where(calls != 0, calls, keys)  # a call repeat is placed by its call
        else:
            calls = np.zeros(count, dtype=np.int64)
        self._record(places[repeat], repeat_of[repeat], keys[repeat], calls[repeat] != 0)
        return ~repeat

    def settle(self, ranges: Sequence[tuple[int, Path, int, int]]) -> None:
        """Confirm what :meth:`keep` left out for a hash seen before: the lines (byte for
        byte, :meth:`_settle_lines`) and the calls (:meth:`_settle_calls`). ``ranges``:
        (source, file, start, end), what was folded, in order. Fills in the shown repeats'
        first places. NeedsExactPath on a mismatch: two different lines or calls shared a
        64-bit hash."""
        self._settle_lines(ranges)
        self._settle_calls(ranges)

    def _settle_lines(self, ranges: Sequence[tuple[int, Path, int, int]]) -> None:
        """Read ``ranges`` again in order, find the first line with each hash a left-out line
        had, and check every later one against it byte for byte (read back from the file)."""
        if not self.pending:
            return
        wanted = np.unique(np.concatenate(self.pending))
        first_place = np.full(len(wanted), -1, dtype=np.int64)
        first_start = np.zeros(len(wanted), dtype=np.int64)
        files = {source: path for source, path, _, _ in ranges}
        with contextlib.ExitStack() as stack:
            back = {s: stack.enter_context(open(p, "rb")) for s, p in files.items()}
            for source, path, start, end in ranges:
                for number, pos, view in read_batches(path, start, end, BATCH_BYTES):
                    data = bytes(view)
                    lines = list(map(bytes.strip, batch_lines(data)))
                    keys = line_keys(lines)
                    at = np.minimum(np.searchsorted(wanted, keys), len(wanted) - 1)
                    rows = np.flatnonzero(wanted[at] == keys)
                    if not len(rows):
                        continue
                    starts = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
                    starts = np.concatenate(([0], starts))
                    for row in rows.tolist():
                        slot = int(at[row])
                        if first_place[slot] < 0:
                            first_place[slot] = (source << 40) + number + row
                            first_start[slot] = pos + int(starts[row])
                            continue
                        fh = back[int(first_place[slot]) >> 40]
                        fh.seek(int(first_start[slot]))
                        if fh.readline().strip() != lines[row]:
                            raise NeedsExactPath
        for index, key in self.unplaced.items():
            slot = int(np.searchsorted(wanted, key))
            self.shown[index] = (self.shown[index][0], int(first_place[slot]))
        self.pending, self.unplaced = [], {}

    def _settle_calls(self, ranges: Sequence[tuple[int, Path, int, int]]) -> None:
        """Read ``ranges`` again in order, find the first row with each call hash a left-out
        row had, and check that every row with that hash records the same call."""
        if not self.pending_calls:
            return
        wanted = np.unique(np.concatenate(self.pending_calls))
        first_place = np.full(len(wanted), -1, dtype=np.int64)
        first_call: dict[int, tuple[Any, ...]] = {}
        for source, path, start, end in ranges:
            for number, _, view in read_batches(path, start, end, BATCH_BYTES):
                data = bytes(view)
                count = len(batch_lines(data))
                found = call_hashes(data, count)
                if found is None:
                    raise NeedsExactPath  # (the fold read these lines: the file changed)
                hashes, has = found
                rows = np.flatnonzero(has)
                keys = call_keys(hashes[rows])
                at = np.minimum(np.searchsorted(wanted, keys), len(wanted) - 1)
                matched = np.flatnonzero(wanted[at] == keys).tolist()
                idents = call_identities(data, count) if matched else []
                if idents is None:
                    raise NeedsExactPath
                for k in matched:
                    slot, row = int(at[k]), int(rows[k])
                    if slot not in first_call:
                        first_call[slot] = idents[row]
                        first_place[slot] = (source << 40) + number + row
                    elif idents[row] != first_call[slot]:
                        raise NeedsExactPath
        for index, key in self.unplaced_calls.items():
            slot = int(np.searchsorted(wanted, key))
            self.shown[index] = (self.shown[index][0], int(first_place[slot]))
        self.pending_calls, self.unplaced_calls = [], {}

    def _calls(self, data: bytes, count: int, repeat: np.ndarray, store: bool) -> np.ndarray:
        """For each row whose call an earlier file recorded (rows that repeat a line
        excepted), the call's hash; 0 for the others. With ``store``, this file's new calls
        are kept for the files after it. Only hashes are kept: :meth:`settle` confirms."""
        found = call_hashes(data, count)
        if found is None:
            raise NeedsExactPath
        hashes, has = found
        calls = np.zeros(count, dtype=np.int64)
        fresh = np.flatnonzero(~repeat & has)
        if not len(fresh):
            return calls
        keys = call_keys(hashes[fresh])
        seen = self.calls.lookup(keys)
        if seen.any():
            self.pending_calls.append(keys[seen])
            calls[fresh[seen]] = keys[seen]
        if store:
            self.remember_calls(keys[~seen])
        return calls

    def file_calls(self) -> np.ndarray:
        """The calls this file recorded (taken: the next file starts afresh)."""
        return self.file_seen.drain()

    def end_of_file(self) -> None:
        """This file's calls become "recorded by an earlier file" for the next ones (a call
        repeated inside one file is not a duplicate: another tool may reuse its ids). None of
        them is in :attr:`calls` yet (those were repeats), so their runs go in as they are."""
        for bucket in self.file_seen.runs:
            for run in bucket:
                self.calls.add(run)
        self.file_seen = SeenKeys()

    def _record(
        self, rows: np.ndarray, firsts: np.ndarray, keys: np.ndarray, calls: np.ndarray
    ) -> None:
        """Count the repeats; keep the first few pairs (a first of -1: found by settle(),
        from the line's hash, or the call's where ``calls``)."""
        self.count += len(rows)
        room = _SHOW - len(self.shown)
        for row, first, key, call in zip(rows[:room].tolist(), firsts[:room].tolist(),
                                         keys[:room].tolist(), calls[:room].tolist(),
                                         strict=True):  # fmt: skip
            if call:
                self.unplaced_calls[len(self.shown)] = key
            elif first < 0:
                self.unplaced[len(self.shown)] = key
            self.shown.append((row, -1 if call else first))

    def message(self) -> str | None:
        if not self.count:
            return None
        shown = [(self.where(a), self.where(b)) for a, b in self.shown]
        return duplicate_message(shown, total=self.count)


_LINE_MASK = (1 << 40) - 1


_SPACE = np.array([32, 9, 13, 11, 12], dtype=np.uint8)  # what bytes.strip removes, but \n


def _unpadded(data: np.ndarray, ends: np.ndarray) -> bool:
    """No line of ``data`` (``ends``: its newlines) starts or ends with what ``bytes.strip``
    removes: then the lines need no strip one by one."""
    if not len(data):
        return True
    after = ends[ends + 1 < len(data)] + 1
    edges = np.concatenate((data[:1], data[-1:], data[ends[ends > 0] - 1], data[after]))
    return not np.isin(edges, _SPACE).any()


def _refuse_deep(
    source: str, first_line: int, raw: list[bytes], data: np.ndarray, ends: np.ndarray
) -> None:
    """The whole-file reader's depth rule (:func:`dedupe._refuse_deep`): msgspec skips an
    unknown field without building it, so a line of 100k nested brackets would pass as a row.
    Brackets are counted per line with numpy; only a line with more than MAX_DEPTH of them is
    scanned exactly."""
    per_line = _brackets_per_line(data, ends, len(raw), MAX_DEPTH)
    for index in np.flatnonzero(per_line > MAX_DEPTH).tolist():
        if _depth_over(raw[index], MAX_DEPTH):
            raise _too_deep(f"{source}:{first_line + index}")


def _brackets_per_line(data: np.ndarray, ends: np.ndarray, lines: int, least: int) -> np.ndarray:
    """How many ``{`` and ``[`` each of the ``lines`` lines of ``data`` holds (``ends``: its
    newlines); all zeros when the whole batch has no more than ``least`` of them."""
    opens = np.flatnonzero((data & 0xDF) == 0x5B)  # "{" (0x7B) and "[" (0x5B): no other byte
    if len(opens) <= least:
        return np.zeros(lines, dtype=np.int64)
    before = np.searchsorted(opens, ends)  # brackets before each newline (then: the last line)
    return np.diff(np.concatenate((before, [len(opens)])), prepend=0)[:lines]


def _firsts(keys: np.ndarray) -> np.ndarray:
    """For each position, the first position with the same key."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    ordered = np.sort(keys)  # a tenth of unique's stable sort: most batches repeat nothing
    if not (ordered[1:] == ordered[:-1]).any():
        return np.arange(len(keys))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


__all__ = ["Repeats", "SeenKeys", "call_keys", "line_keys"]
