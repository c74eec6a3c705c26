"""What ``eloledger tokens`` prints, folded batch by batch: memory flat in the ledger's length.

A summary is sums and counts per group and per (group, task), and two latency percentiles per
group. So a ledger is folded a few MB at a time into a :class:`TokenTally` that keeps only those
(plus each group's distinct latencies with their counts, for exact percentiles): memory grows
with groups, tasks and distinct latencies, never with rows. Worker processes fold slices of a
big file and the slices' tallies merge in file order, so every "first at" location and every
first-seen order is the one a whole-file read gives.

The rules are :mod:`eloledger.ledger.summary`'s, applied to each batch; this is their one
implementation (a ledger already in memory is one batch: :func:`tally_ledger`). The tests hold
a second, whole-ledger reading of the rules as an oracle (``tests/ledger/summary_oracle.py``)
and compare the two on varied ledgers. Streaming
covers one file in writing order (timestamps strictly increasing, so no row can repeat another);
several files, a repeated or missing ``ts`` stream through :mod:`eloledger.ledger.streamfold`
(the duplicate rules batch by batch); only a line the exact reader must read sends the files
to :func:`eloledger.ledger.merge.read_ledgers`, read whole and folded as one batch.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.errors import CodedWarning
from eloledger.ledger import tallycache
from eloledger.ledger.answered import FIELD as ANSWERED
from eloledger.ledger.answered import file_warnings
from eloledger.ledger.batches import BATCH_BYTES as _BATCH_BYTES
from eloledger.ledger.batches import Load, decode_batch, read_batches
from eloledger.ledger.columns import Factor, NeedsExactPath, batch_swaps
from eloledger.ledger.fastread import _PARALLEL_MIN_BYTES, _auto_workers, _split
from eloledger.ledger.slices import read_slices, stop_if_told
from eloledger.ledger.summary import (
    ARM_ROLES,
    MISSING_NAME,
    _key,
    _number,
    _share,
    counted_usage,
    judge_group,
    latency_stats,
    unbilled_counts,
    unbilled_warnings,
)

# Per-group counters, one row per group: merging two tallies adds rows.
(CALLS, OK, MISSING, PROMPT, COMPLETION, TOTAL, EST_N, EST_T, FAIL_T, COST, UNPRICED) = range(11)
_WIDTH = 11
_TOKENS = ("prompt_tokens", "completion_tokens", "total_tokens")
_BUFFER = 1 << 18  # sparse entries buffered before they are summed up (~4 MB)


class _Sparse:
    """Sums of weights per int64 key, appended in batches and summed when the buffer fills.

    The buffer counts only the entries added since the last sum (and grows with a quarter of
    the distinct keys): counting the distinct ones too re-sorted every key after each few rows
    once there were nearly as many as the buffer holds (latencies: 0.57 s of 3.9 s for 1M
    rows), while memory stays about the distinct keys plus one buffer."""

    def __init__(self) -> None:
        self.keys: list[np.ndarray] = []
        self.sums: list[np.ndarray] = []
        self.distinct = 0  # keys in the compacted part (self.keys[0] once tidy)
        self.pending = 0  # entries appended since
        self.tidy = True  # keys distinct and sorted

    def add(self, keys: np.ndarray, sums: np.ndarray) -> None:
        self.keys.append(keys)
        self.sums.append(sums)
        self.pending += len(keys)
        self.tidy = False
        if self.pending > max(_BUFFER, self.distinct // 4):
            self.compact()

    def compact(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct keys ascending, their sums)."""
        if not self.keys:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if not self.tidy:
            keys, sums = np.concatenate(self.keys), np.concatenate(self.sums)
            order = np.argsort(keys, kind="stable")  # the sorted head is one run: cheap
            keys, sums = keys[order], sums[order]
            starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
            # Whole numbers below 2**53 (counts, token totals): exact in any order of adding.
            sums = np.add.reduceat(sums, starts) if len(starts) else sums
            self.keys, self.sums = [keys[starts]], [sums]
            self.distinct, self.pending, self.tidy = len(starts), 0, True
        return self.keys[0], self.sums[0]


def _pack(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    return (high.astype(np.int64) << 32) | low.astype(np.int64)


def _unpack(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return keys >> 32, keys & 0xFFFFFFFF


class _Levels:
    """Names in first-seen order (None: the row had none), and where each one is."""

    def __init__(self, names: Sequence[Any] = ()) -> None:
        self.names: list[Any] = []
        self.index: dict[Any, int] = {}
        self.remap(names)

    def remap(self, names: Sequence[Any]) -> np.ndarray:
        """The code of each of ``names`` here, added when new."""
        codes = list(map(self.index.get, names))
        if None in codes:
            for i, name in enumerate(names):
                if codes[i] is None:
                    codes[i] = self.index.setdefault(name, len(self.names))
                    if codes[i] == len(self.names):
                        self.names.append(name)
        return np.array(codes, dtype=np.int64)


def _slots(factor: Factor) -> tuple[np.ndarray, list[Any]]:
    """Codes with missing as the last slot, and the slot names (None for missing)."""
    codes = np.where(factor.codes < 0, len(factor.levels), factor.codes)
    return codes, [*factor.levels, None]


def _day_slots(ts: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Each row's UTC day number (summary's ``_day_factor``), missing as the last slot."""
    known = np.isfinite(ts)
    days = np.full(len(ts), -1, dtype=np.int64)
    days[known] = np.floor(ts[known] / 86400).astype(np.int64)
    uniq, codes = np.unique(days[known], return_inverse=True)
    slots = np.full(len(ts), len(uniq), dtype=np.int64)
    slots[known] = codes.reshape(-1)
    return slots, [*uniq.tolist(), None]


class _GroupTally:
    """The summary of the rows whose role is in ``roles``, grouped by ``key``."""

    def __init__(self, key: str, roles: tuple[str, ...], *, latency: bool) -> None:
        self.key, self.roles, self.latency = key, roles, latency
        self.groups = _Levels()
        self.tasks = _Levels()
        self.counts = np.zeros((0, _WIDTH))
        self.pairs = _Sparse()  # (group, task) -> total tokens of its ok rows with usage
        self.latencies = _Latencies()  # (group, latency) -> ok calls with that latency
        self.unpriced: set[str] = set()

    def fold(self, batch: Mapping[str, Any], rows: dict[str, np.ndarray], cost: Any) -> None:
        """Add one batch (``rows``: the masks and token columns every group tally shares)."""
        if self.key == "day":
            slots, names = _day_slots(batch["ts"])
        else:
            slots, names = _slots(batch[self.key])
        task_slots, task_names = _slots(batch["task_id"])
        # Every name of the batch, chosen rows or not: the order is the whole column's.
        groups, tasks = self.groups.remap(names), self.tasks.remap(task_names)
        self._grow()
        chosen = batch["role"].mask(*self.roles)
        if not chosen.any():
            return
        group, task = groups[slots[chosen]], tasks[task_slots[chosen]]
        ok, usage = rows["ok"][chosen], rows["usage"][chosen]
        good = ok & usage
        guessed = good & rows["estimated"][chosen]
        failed = ~ok & usage
        tokens = {name: rows[name][chosen] for name in _TOKENS}
        total = tokens["total_tokens"]
        size = len(self.groups.names)

        def count(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
            w = None if weights is None else weights[mask]
            return np.bincount(group[mask], weights=w, minlength=size)

        add = self.counts
        add[:, CALLS] += np.bincount(group, minlength=size)
        add[:, OK] += count(ok)
        add[:, MISSING] += count(ok & ~usage)
        add[:, PROMPT] += count(good, tokens["prompt_tokens"])
        add[:, COMPLETION] += count(good, tokens["completion_tokens"])
        add[:, TOTAL] += count(good, total)
        add[:, EST_N] += count(guessed)
        add[:, EST_T] += count(guessed, total)
        add[:, FAIL_T] += count(failed, total)
        if cost is not None:
            cost = cost[chosen]
            unpriced = good & np.isnan(cost)
            add[:, COST] += count(good, np.nan_to_num(cost))
            add[:, UNPRICED] += count(unpriced)
            if unpriced.any():
                model = batch["model"]
                codes = model.codes[chosen][unpriced]
                self.unpriced |= {model.levels[c] if c >= 0 else MISSING_NAME for c in codes.tolist()}  # fmt: skip
        if good.any():
            self.pairs.add(_pack(group[good], task[good]), total[good])
        if self.latency:
            latency = rows["latency_ms"][chosen]
            timed = ok & np.isfinite(latency)
            if timed.any():
                self.latencies.add(group[timed], latency[timed], np.ones(int(timed.sum())))

    def _grow(self) -> None:
        missing = len(self.groups.names) - len(self.counts)
        if missing > 0:
            self.counts = np.vstack([self.counts, np.zeros((missing, _WIDTH))])

    def merge(self, other: _GroupTally) -> None:
        """Add ``other`` (a later slice of the file) to this tally."""
        groups = self.groups.remap(other.groups.names)
        tasks = self.tasks.remap(other.tasks.names)
        self._grow()
        self.counts[groups] += other.counts
        keys, sums = other.pairs.compact()
        if len(keys):
            g, t = _unpack(keys)
            self.pairs.add(_pack(groups[g], tasks[t]), sums)
        g, values, counts = other.latencies.items()
        if len(g):
            self.latencies.add(groups[g], values, counts)
        self.unpriced |= other.unpriced

    def order(self) -> list[int]:
        """Group codes in the summary's order: first seen (days: by date), missing last."""
        names = self.groups.names
        known = [i for i, name in enumerate(names) if name is not None]
        if self.key == "day":
            known.sort(key=names.__getitem__)
        return known + [i for i, name in enumerate(names) if name is None]

    def name(self, code: int) -> str:
        name = self.groups.names[code]
        if name is None:
            return MISSING_NAME
        if self.key == "day":
            return time.strftime("%Y-%m-%d", time.gmtime(int(name) * 86400))
        return str(name)

    def task_means(self) -> np.ndarray:
        """Mean over tasks (with an ok row with usage) of each group's per-task total."""
        keys, sums = self.pairs.compact()
        g, t = _unpack(keys)
        task_order = np.empty(max(len(self.tasks.names), 1), dtype=np.int64)
        ranked = sorted(range(len(self.tasks.names)), key=lambda i: self.tasks.names[i] is None)
        task_order[ranked] = np.arange(len(ranked))
        out = np.full(len(self.groups.names), np.nan)
        by_group = np.lexsort((task_order[t] if len(t) else t, g))
        g, sums = g[by_group], sums[by_group]
        bounds = np.flatnonzero(np.diff(g)) + 1
        for part_g, part in zip(np.split(g, bounds), np.split(sums, bounds), strict=True):
            if len(part):
                out[int(part_g[0])] = part.sum() / len(part)
        return out

    def summaries(self, *, costs: bool) -> list[dict[str, Any]]:
        """One dict per group with calls, in first-seen order (SUMMARY_FIELDS, then costs and latency)."""
        means = self.task_means()
        latency = self._latency() if self.latency else {}
        out = []
        for i in self.order():
            row = self.counts[i]
            if row[CALLS] == 0:
                continue
            calls, ok, missing = int(row[CALLS]), int(row[OK]), int(row[MISSING])
            total = _number(row[TOTAL])
            group: dict[str, Any] = {
                "name": self.name(i),
                "calls": calls,
                "ok": ok,
                "errors": calls - ok,
                "usage_missing": missing,
                "usage_estimated": int(row[EST_N]),
                "estimated_token_share": _share(row[EST_T], row[TOTAL]),
                "prompt_tokens": _number(row[PROMPT]),
                "completion_tokens": _number(row[COMPLETION]),
                "total_tokens": total,
                "mean_total_tokens": total / (ok - missing) if ok - missing else None,
                "task_mean_total_tokens": None if np.isnan(means[i]) else float(means[i]),
            }
            if costs:
                group["cost"] = None if row[UNPRICED] else float(row[COST])
            if self.latency:
                stats = latency.get(i, {"p50": None, "p95": None})
                group["latency_p50_ms"], group["latency_p95_ms"] = stats["p50"], stats["p95"]
            out.append(group)
        return out

    def _latency(self) -> dict[int, dict[str, Any]]:
        """p50/p95 per group, exact: the distinct latencies repeated by their counts."""
        g, values, counts = self.latencies.items()  # sorted by group, then latency
        bounds = np.flatnonzero(np.diff(g)) + 1
        out = {}
        for part_g, part_v, part_c in zip(
            np.split(g, bounds), np.split(values, bounds), np.split(counts, bounds), strict=True
        ):
            if len(part_g):
                out[int(part_g[0])] = latency_stats(np.repeat(part_v, part_c.astype(np.int64)))
        return out


class _Latencies:
    """How many ok calls of each group took each distinct latency (exact percentiles).

    Latencies written to the microsecond or coarser (the runner writes 0.1 ms, agent logs
    whole ms) pack with their group into one int64, half the memory of the general key and
    sorted faster; the first latency that does not fit widens every key to the general one."""

    def __init__(self) -> None:
        self.sums = _Sparse()
        self.micro = True  # keys are group << 40 | microseconds

    def add(self, group: np.ndarray, latency: np.ndarray, counts: np.ndarray) -> None:
        if self.micro:
            keys = _pack_micro(group, latency)
            if keys is not None:
                self.sums.add(keys, counts)
                return
            self._widen()
        self.sums.add(_pack_latency(group, latency), counts)

    def items(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group, latency, calls), sorted by group, then latency."""
        keys, counts = self.sums.compact()
        if self.micro:
            return keys >> _MICRO_BITS, (keys & _MICRO_MASK) / 1000.0, counts
        return (*_unpack_latency(keys), counts)

    def compact(self) -> None:
        self.sums.compact()

    def _widen(self) -> None:
        group, latency, counts = self.items()
        self.sums, self.micro = _Sparse(), False
        if len(group):
            self.sums.add(_pack_latency(group, latency), counts)


_MICRO_BITS = 40  # microseconds below 2**40 (12 days); groups below 2**23
_MICRO_MASK = (1 << _MICRO_BITS) - 1


def _pack_micro(group: np.ndarray, latency: np.ndarray) -> np.ndarray | None:
    """group << 40 | latency in whole microseconds, or None when a latency is not exactly a
    number of microseconds (``us / 1000 == latency``: the key gives it back bit for bit)."""
    micro = np.rint(latency * 1000.0)
    fits = (micro / 1000.0 == latency) & (micro >= 0) & (micro <= _MICRO_MASK)
    fits &= ~np.signbit(latency)  # -0.0 would come back as 0.0
    if not fits.all() or (len(group) and int(group.max()) >= 1 << 23):
        return None
    return (group.astype(np.int64) << _MICRO_BITS) | micro.astype(np.int64)


def _pack_latency(group: np.ndarray, latency: np.ndarray) -> np.ndarray:
    """(group, latency) as one complex128 key: the real part holds the group's int64 bits
    (a tiny non-negative float, ordered as the ints are), the imaginary part the latency;
    complex numbers sort by real then imaginary part, so keys sort by group, then latency."""
    pairs = np.empty((len(group), 2), dtype=np.int64)
    pairs[:, 0] = group
    pairs[:, 1] = latency.view(np.int64)
    return pairs.view(np.complex128).reshape(-1)


def _unpack_latency(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs = np.ascontiguousarray(keys).view(np.int64).reshape(-1, 2)
    return pairs[:, 0].copy(), pairs[:, 1].view(np.float64).copy()


class TokenTally:
    """The arms' (or tasks', days', ...) summary, the judge's, and the warnings' evidence."""

    def __init__(self, by: str = "arm", prices: Mapping[str, Any] | None = None) -> None:
        self.by = by
        self.prices = dict(prices) if prices else None
        self.arms = _GroupTally(_key(by), ARM_ROLES, latency=True)
        self.judge = _GroupTally("arm", ("judge",), latency=False)
        self.rows = 0
        self.odd = [0, -1]  # rows with fractional or absurd counts, first such row
        self.unequal = [0, -1]  # rows whose total is not prompt + completion (+ reasoning)
        self.ts = [np.inf, -np.inf, True]  # first, last, strictly increasing throughout
        self.answered = False  # a row names model_answered: the answered-model scan is due

    def fold(self, batch: Mapping[str, Any], length: int, load: Load) -> None:
        """Add one batch of columns (a whole :class:`Ledger` is one batch too)."""
        tokens = {name: batch[name] for name in _TOKENS}
        missing = batch["usage_source"].mask("missing")
        estimated = batch["usage_source"].mask("estimated")
        known = ~missing & ~np.isnan(tokens["total_tokens"])
        rows: dict[str, np.ndarray] = {
            "ok": batch["status"].mask("ok"),
            "usage": counted_usage(
                known, estimated, tokens["prompt_tokens"], tokens["total_tokens"]
            ),
            "estimated": estimated,
            "latency_ms": batch["latency_ms"],
            **{name: np.nan_to_num(column, nan=0.0) for name, column in tokens.items()},
        }
        cost = None
        if self.prices is not None:
            from eloledger.ledger.prices import row_costs

            model = batch["model"]
            counts = {k: batch[k] for k in (*_TOKENS[:2], "cached_tokens", "cache_write_tokens")}
            cost = row_costs(model.levels, model.codes, counts, self.prices)
        self.arms.fold(batch, rows, cost)
        self.judge.fold(batch, rows, None)
        self._check_counts(tokens, load)
        if ANSWERED in batch:  # (msgspec finds the field: a fifth of the time of bytes.find)
            self.answered = self.answered or bool(batch[ANSWERED].any())
        if "ts" in batch:
            self._check_ts(batch["ts"])
        self.rows += length

    def _check_counts(self, counts: dict[str, np.ndarray], load: Load) -> None:
        """The evidence for summary.unbilled_warnings in this batch: how many, the first."""
        odd, bad = unbilled_counts(counts, lambda: load("reasoning_tokens"))
        for mask, seen in ((odd, self.odd), (bad, self.unequal)):
            if mask.any():
                if seen[1] < 0:
                    seen[1] = self.rows + int(np.flatnonzero(mask)[0])
                seen[0] += int(mask.sum())

    def _check_ts(self, ts: np.ndarray) -> None:
        if not len(ts):
            return
        steps_ok = not np.isnan(ts).any() and bool((np.diff(ts) > 0).all())
        first, last, increasing = self.ts
        self.ts = [min(first, ts[0]), ts[-1], increasing and steps_ok and ts[0] > last]

    def in_writing_order(self) -> bool:
        """Timestamps strictly increasing: no row of this one file can repeat another."""
        return bool(self.ts[2])

    def tidy(self) -> None:
        """Sum up every buffered entry now: a slice's tally is tidied where it was folded
        (in parallel), so merging sorted runs afterwards is a linear merge."""
        for part in (self.arms, self.judge):
            part.pairs.compact()
            part.latencies.compact()

    def merge(self, other: TokenTally) -> None:
        """Add ``other``, the tally of the rows that follow this one's."""
        self.arms.merge(other.arms)
        self.judge.merge(other.judge)
        for mine, theirs in ((self.odd, other.odd), (self.unequal, other.unequal)):
            if mine[1] < 0 and theirs[1] >= 0:
                mine[1] = self.rows + theirs[1]
            mine[0] += theirs[0]
        if other.rows:
            first, last, increasing = other.ts
            if self.rows:
                increasing = increasing and self.ts[2] and first > self.ts[1]
            self.ts = [min(self.ts[0], first), last, increasing]
        self.rows += other.rows
        self.answered = self.answered or other.answered

    def groups(self) -> list[dict[str, Any]]:
        """Each group's SUMMARY_FIELDS, then its cost (with prices) and latency p50/p95."""
        return self.arms.summaries(costs=self.prices is not None)

    def judge_summary(self) -> dict[str, Any] | None:
        rows = self.judge.summaries(costs=False)
        return judge_group(rows) if rows else None

    def warnings(self, where: Callable[[int], str]) -> list[str]:
        """Usage gaps, tokens on failed calls, unbilled counts, unpriced models; ``where``: row
        index -> file:line."""
        g = self.arms
        order = g.order()
        counts = g.counts
        out = []
        missing = int(counts[:, MISSING].sum())
        if missing:
            out.append(
                f"{missing} ok call(s) have no token usage (none, or zero): counted in "
                "usage_missing, not in the sums (run 'eloledger doctor --ledger' to see which gateway drops usage)"
            )
        guessed = [i for i in order if counts[i, EST_N]]
        if guessed:
            named = ", ".join(f"{g.name(i)} ({int(counts[i, EST_N])})" for i in guessed)
            out.append(
                CodedWarning(
                    "usage.estimated",
                    f"{int(counts[:, EST_N].sum())} ok call(s) have ESTIMATED token counts (the "
                    f"gateway reported no usage; eloledger guessed from characters), by {self.by}: "
                    f"{named}; fix: have the gateway report usage (stream_options.include_usage, or "
                    "a gateway that sends usage on streams) - see 'eloledger doctor --ledger'",
                )
            )
        parts = [f"{g.name(i)}: {_number(counts[i, FAIL_T])}" for i in order if counts[i, FAIL_T]]
        if parts:
            out.append(
                "failed calls reported tokens that are not in the sums (" + ", ".join(parts) + ")"
            )
        out += unbilled_warnings(
            (self.odd[0], where(self.odd[1]) if self.odd[0] else ""),
            (self.unequal[0], where(self.unequal[1]) if self.unequal[0] else ""),
        )
        if g.unpriced:
            out.append(
                f"no price (or no cache price) in prices.toml for: {', '.join(sorted(g.unpriced))}; "
                "groups that used them have no cost (eloledger never guesses prices)"
            )
        return out


def tally_ledger(
    ledger: Any, by: str, prices: Mapping[str, Any] | None
) -> tuple[TokenTally, list[str]]:
    """A ledger already in memory (merged, deduplicated, selected), folded as one batch, and
    every warning ``tokens`` prints about it."""
    tally = TokenTally(by, prices)
    tally.fold(ledger, len(ledger), ledger.load)
    answered = file_warnings(source[0] for source in getattr(ledger, "sources", ()))
    return tally, [*ledger.warnings, *tally.warnings(ledger.where), *answered]


def tally_rows(ledger: Any, rows: np.ndarray, by: str) -> TokenTally:
    """:func:`tally_ledger`'s tally of ``ledger``'s rows at indices ``rows`` alone (a column
    read later is taken at the same rows; names in the order these rows first show them);
    its warnings' evidence is ``ledger.where(rows[i])``."""

    def take(column: Any) -> Any:
        return column.take(rows) if isinstance(column, Factor) else column[rows]

    tally = TokenTally(by, None)
    batch = {name: take(ledger[name]) for name in ledger.columns}
    tally.fold(batch, len(rows), lambda name: take(ledger.load(name)))
    return tally


def read_tally(
    ledgers: Any,
    columns: Sequence[str],
    by: str,
    prices: Mapping[str, Any] | None,
    *,
    workers: int | None = None,
    cache: Callable[[], Path] | None = None,
) -> tuple[TokenTally, list[str]]:
    """The tally of every ledger ``ledgers`` names (files, globs, folders), duplicates counted
    once, and the warnings: one file in writing order is streamed by :func:`stream_tally`, any
    other files by :func:`eloledger.ledger.streamfold.fold_files` (the duplicate rules batch
    by batch); only a line the exact reader must read sends the files to the whole-file read.
    ``cache``: the folder where one file in writing order keeps its tally (:mod:`tallycache`),
    asked for only when the file is big enough to be worth it."""
    from eloledger.ledger.merge import _as_list, read_ledgers
    from eloledger.ledger.sources import expand_ledgers
    from eloledger.ledger.streamfold import fold_files

    paths = expand_ledgers(_as_list(ledgers))
    if len(paths) == 1 and _has_ts(paths[0]):
        streamed = stream_tally(paths[0], columns, by, prices, workers=workers, cache=cache)
        if streamed is not None:
            tally, warnings = streamed
            where = tally.warnings(lambda i: f"{paths[0]}:{i + 1}")
            answered = file_warnings(paths) if tally.answered else []
            return tally, [*warnings, *where, *answered]
    names = _fold_names(columns)
    try:
        folded = fold_files(
            paths, names, functools.partial(TokenTally, by, prices), workers=workers
        )
    except NeedsExactPath:
        return tally_ledger(read_ledgers(paths, columns=columns, workers=workers), by, prices)
    answered = file_warnings(paths) if folded.tally.answered else []
    return folded.tally, [*folded.warnings, *folded.tally.warnings(folded.where), *answered]


def _fold_names(columns: Sequence[str]) -> tuple[str, ...]:
    """The columns a fold decodes: those asked for, the ``ts`` that tells writing order, and
    whether a row names the model that answered (then the answered-model scan is due)."""
    return (*columns, *(name for name in ("ts", ANSWERED) if name not in columns))


def _has_ts(path: Path) -> bool:
    """Whether the first line names a ``ts`` (a ledger without one is never in writing order,
    so the writing-order fold would only be thrown away)."""
    with open(path, "rb") as fh:
        return b'"ts"' in fh.readline(1 << 16)


def stream_tally(
    path: Path,
    names: Sequence[str],
    by: str,
    prices: Mapping[str, Any] | None,
    *,
    workers: int | None = None,
    cache: Callable[[], Path] | None = None,
) -> tuple[TokenTally, list[str]] | None:
    """One ledger file folded batch by batch (slices in worker processes for big files), and
    its torn-line warning; None when the file must be read whole (see the module's doc).
    ``cache``: the folder to keep the tally in, so that the next read folds only what was
    appended (:mod:`eloledger.ledger.tallycache`); asked for only for a file big enough."""
    from eloledger.ledger.reader import _inspect, _torn_message

    end, torn = _inspect(path)
    names = _fold_names(names)
    new = functools.partial(TokenTally, by, prices)
    cached, key, folder, folded = None, "", None, (0, 0)
    if cache is not None and end >= tallycache.SMALLEST:
        key = tallycache.fingerprint(names, by, prices)
        folder, folded = cache(), tallycache.identity(path)
        cached = tallycache.load(path, key, folder)
        if cached is not None and end - cached.end >= _PARALLEL_MIN_BYTES:
            cached = None  # so much is new that folding it in slices is faster
    tally: TokenTally | None
    try:
        if cached is not None:
            tally = _fold_into(cached.tally, str(path), cached.end, end, names)
        else:
            tally = _fold_whole(path, end, names, new, workers)
    except NeedsExactPath:
        return None
    if tally is None or not tally.rows or not tally.in_writing_order():
        return None
    if folder is not None and (cached is None or cached.end != end):
        tallycache.save(path, key, folder, tally, end, folded)
    return tally, [_torn_message(path, tally.rows + 1, torn)] if torn else []


def _fold_whole(
    path: Path, end: int, names: Sequence[str], new: Callable[[], TokenTally], workers: int | None
) -> TokenTally | None:
    count = workers if workers is not None else _auto_workers(end)
    bounds = _split(path, end, count, first_share=_LEAD_SHARE / count if count > 1 else None)
    if len(bounds) == 1:
        return _fold_range(str(path), 0, end, names, new)
    return _fold_parallel(str(path), bounds, names, new)


def _fold_parallel(
    path: str, bounds: list[tuple[int, int]], names: Sequence[str], new: Callable[[], TokenTally]
) -> TokenTally | None:
    read = functools.partial(_fold_range, path, names=names, new=new)
    try:
        tally, *rest = read_slices(read, bounds)
    except (BrokenProcessPool, OSError, ValueError):
        return _fold_range(path, 0, bounds[-1][1], names, new)
    for part in rest:
        tally.merge(part)
    return tally


# This process folds the first slice, then merges the workers' tallies (about a tenth of a
# slice's time for 1M rows): so its slice is a little smaller, and all finish together.
_LEAD_SHARE = 0.94


def _fold_range(
    path: str, start: int, end: int, names: Sequence[str], new: Callable[[], TokenTally]
) -> TokenTally:
    """Fold the whole lines in ``[start, end)``, read a few MB at a time (no mapping of the
    file: the process holds one batch, whatever the file's size)."""
    return _fold_into(new(), path, start, end, names)


def _fold_into(
    tally: TokenTally, path: str, start: int, end: int, names: Sequence[str]
) -> TokenTally:
    """Fold the whole lines in ``[start, end)`` into ``tally``, which holds the lines before
    ``start``; NeedsExactPath as soon as they are out of writing order."""
    swaps = None
    for _, _, lines in read_batches(Path(path), start, end, _BATCH_BYTES):
        stop_if_told()
        if swaps is None:
            swaps = batch_swaps(lines, names)
        tally.fold(*decode_batch(lines, names, swaps))
        if not tally.in_writing_order():
            raise NeedsExactPath  # not this fold's shape: stop now, not at the slice's end
    tally.tidy()
    return tally


__all__ = ["TokenTally", "read_tally", "stream_tally", "tally_ledger", "tally_rows"]
