"""Slices read at once in fork workers (ledger/slices.py): when one slice fails the others stop
at their next batch, the first real error is the one raised, and no worker or pool thread is
left behind (a ledger out of writing order used to leave the workers folding in the background
and the reader that followed it serial, at twice the time)."""

from __future__ import annotations

import multiprocessing
import random
import threading
import time
from pathlib import Path

import pytest
from test_ledger_tally import columns, same, varied_rows, whole, write

from eloledger.ledger import fastread, streamfold
from eloledger.ledger import tally as tally_module
from eloledger.ledger.columns import NeedsExactPath
from eloledger.ledger.slices import SliceStopped, read_slices, stop_if_told
from eloledger.ledger.tally import read_tally


def _count_batches(start: int, end: int, fail_at: int, marks: str) -> int:
    """A slice of ``end - start`` batches, 10 ms each; the slice starting at ``fail_at``
    fails on its first batch. Each batch done appends a byte to the file ``marks``."""
    for _ in range(start, end):
        stop_if_told()
        if start == fail_at:
            raise NeedsExactPath(f"slice {start}")
        time.sleep(0.01)
        with open(marks, "ab") as fh:
            fh.write(b".")
    return end - start


def _read(fail_at: int, marks: Path) -> object:
    import functools

    return functools.partial(_count_batches, fail_at=fail_at, marks=str(marks))


def test_slices_come_back_in_order_when_none_fails(tmp_path: Path) -> None:
    got = read_slices(_read(-1, tmp_path / "m"), [(0, 3), (3, 8), (8, 9)])
    assert got == [3, 5, 1]
    assert (tmp_path / "m").read_bytes() == b"." * 9
    assert not multiprocessing.active_children() and threading.active_count() == 1


@pytest.mark.parametrize("fail_at", [0, 1000], ids=["this process's slice", "a worker's slice"])
def test_a_failed_slice_stops_the_others_at_their_next_batch(tmp_path: Path, fail_at: int) -> None:
    marks = tmp_path / "m"
    bounds = [(0, 1000), (1000, 2000)]  # 10 s a slice if nothing stopped it
    start = time.perf_counter()
    with pytest.raises(NeedsExactPath, match=f"slice {fail_at}"):
        read_slices(_read(fail_at, marks), bounds)
    assert time.perf_counter() - start < 5
    done = len(marks.read_bytes()) if marks.exists() else 0
    assert done < 500  # the other slice stopped long before its thousand batches
    assert not multiprocessing.active_children() and threading.active_count() == 1
    stop_if_told()  # outside read_slices it never stops anything


def test_the_first_real_error_is_raised_not_a_stopped_slice(tmp_path: Path) -> None:
    # the second worker fails; the first worker is stopped (SliceStopped), which is not raised
    bounds = [(0, 1000), (1000, 2000), (2000, 3000)]
    with pytest.raises(NeedsExactPath, match="slice 2000"):
        read_slices(_read(2000, tmp_path / "m"), bounds)
    assert not issubclass(NeedsExactPath, SliceStopped)


def test_a_ledger_out_of_writing_order_is_still_folded_on_every_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tokens`` first tries the writing-order fold, which gives up on a shuffled ``ts`` at
    its first batch; its workers must be gone at once, so that the duplicate-rule fold after
    it forks its own (a process with threads does not fork) and gives what the whole-file
    read gives."""
    monkeypatch.setattr(tally_module, "_BATCH_BYTES", 2048)
    monkeypatch.setattr(fastread, "_PARALLEL_MIN_BYTES", 64 << 10)  # auto: workers for this file
    rows = varied_rows(5, 3000)
    random.Random(5).shuffle(rows)
    path = write(tmp_path / "l.jsonl", rows)
    assert path.stat().st_size > 128 << 10
    names = columns("arm", False)
    forks: list[tuple[str, int]] = []

    def counted(module: str):  # noqa: ANN202 (read_slices, its slices counted)
        def read(read: object, bounds: list) -> list:
            forks.append((module, len(bounds)))
            return read_slices(read, bounds)  # type: ignore[arg-type]

        return read

    monkeypatch.setattr(tally_module, "read_slices", counted("in writing order"))
    monkeypatch.setattr(streamfold, "read_slices", counted("duplicate rules"))
    same(read_tally(path, names, "arm", None), whole(path, "arm", None))
    assert [module for module, _ in forks] == ["in writing order", "duplicate rules"]
    assert all(count >= 2 for _, count in forks)  # both forked workers
    assert not multiprocessing.active_children() and threading.active_count() == 1
