"""The streamed fold with the duplicate rules (ledger/streamfold.py) gives what the whole-file
read gives: on every shape that used to be read whole (no ts, repeated ts, several files, a
copy, overlapping shards), in batches of a few rows, and on hypothesis's ledgers it keeps and
names exactly the rows the line-by-line duplicate finder keeps and names."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_ledger_tally import PRICES, columns, same, varied_rows, whole, write

from eloledger.errors import UserError
from eloledger.ledger import answered, merge, streamfold
from eloledger.ledger import repeats as repeat_rules
from eloledger.ledger.columns import NeedsExactPath
from eloledger.ledger.dedupe import duplicate_message
from eloledger.ledger.tally import TokenTally, read_tally


@pytest.fixture
def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streamfold, "_BATCH_BYTES", 2048)
    monkeypatch.setattr(streamfold, "_BLOCK_BYTES", 24 << 10)  # several tallies a share


def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the whole-file read an error: the streamed fold must handle these itself."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read whole, not streamed")

    monkeypatch.setattr(merge, "read_ledgers", refuse)


@pytest.mark.parametrize(
    "case",
    [
        "no ts",
        "repeated ts",
        "two files",
        "a copy",
        "a middle copy",
        "overlapping shards",
        "cat L L",
    ],
)
@pytest.mark.parametrize(("by", "workers"), [("arm", 1), ("task", 2), ("model", 2)])
def test_every_shape_streams_and_equals_the_whole_read(
    tmp_path: Path,
    tiny_batches: None,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    by: str,
    workers: int,
) -> None:
    """Two workers: blocks folded apart and merged in order; a block holding a repeat of an
    earlier row (cat L L, a copy) is folded again without it."""
    ts = {"no ts": "none", "repeated ts": "repeated", "cat L L": "none"}.get(case, "increasing")
    rows = varied_rows(4, 600, ts=ts)  # fractional counts from row 370: the second slice
    path = write(tmp_path / "a.jsonl", rows)
    paths: Any = path
    if case == "repeated ts":
        with path.open("a") as fh:
            fh.write(json.dumps(rows[-1]) + "\n")
    if case == "two files":
        paths = [path, write(tmp_path / "b.jsonl", varied_rows(5, 200))]
    if case == "a copy":
        paths = [path, write(tmp_path / "copy.jsonl", rows[:50])]
    if case == "a middle copy":  # its first batch is new: a slice finds the repeat
        paths = [path, write(tmp_path / "copy.jsonl", varied_rows(7, 30) + rows[250:300])]
    if case == "overlapping shards":  # the same calls recorded again, with other latencies
        again = [{**r, "latency_ms": 1.5, "sample": i % 3} for i, r in enumerate(rows[100:160])]
        paths = [path, write(tmp_path / "b.jsonl", again + varied_rows(6, 40))]
    if case == "cat L L":
        path.write_text(path.read_text() * 2)
    expected = whole(paths, by, PRICES)
    no_fallback(monkeypatch)
    tallied = read_tally(paths, columns(by, True), by, PRICES, workers=workers)
    same(tallied, expected)
    if case in ("repeated ts", "a copy", "a middle copy", "overlapping shards", "cat L L"):
        assert any("duplicate" in w for w in tallied[1])


def new_calls(seed: int) -> list[dict]:
    """Rows whose calls no other file records (their task ids are new)."""
    return [{**r, "task_id": f"new-{seed}-{i}"} for i, r in enumerate(varied_rows(seed, 300))]


@pytest.mark.parametrize("case", ["nothing repeats", "shards meeting at a seam", "a middle copy"])
def test_only_the_blocks_that_hold_a_repeat_are_folded_again(
    tmp_path: Path, tiny_batches: None, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Every file is shared out among the processes whatever it repeats, in blocks; only a
    block that holds a repeat is folded again (without it), and the result is the whole
    read's."""
    monkeypatch.setattr(streamfold, "_BLOCK_BYTES", 16 << 10)
    rows = varied_rows(4, 600, ts="none")
    seam = [{**r, "latency_ms": 9.5} for r in rows[-30:]]  # the same calls, other bytes
    second = {
        "nothing repeats": new_calls(8),
        "shards meeting at a seam": seam + new_calls(8),
        "a middle copy": [*new_calls(9), *rows[250:260], *new_calls(10)],
    }[case]
    paths = [write(tmp_path / "a.jsonl", rows), write(tmp_path / "b.jsonl", second)]
    paths.append(write(tmp_path / "c.jsonl", new_calls(11)))
    shares: list[list[set[str]]] = []
    refolded: list[set[str]] = []
    real_shares, real_block = streamfold._fold_shares, streamfold._fold_block

    def spy_shares(folded: list, *args: Any) -> Any:
        shares.extend([{p.path.name for _, p in block} for block in share] for share in folded)
        return real_shares(folded, *args)

    def spy_block(block: list, *args: Any) -> Any:
        if args[-1] is not None:  # rows to leave out: folded again (always in this process)
            refolded.append({p.path.name for _, p in block})
        return real_block(block, *args)

    monkeypatch.setattr(streamfold, "_fold_shares", spy_shares)
    monkeypatch.setattr(streamfold, "_fold_block", spy_block)
    tallied = read_tally(paths, columns("arm", True), "arm", PRICES, workers=3)
    same(tallied, whole(paths, "arm", PRICES))
    blocks = [names for share in shares for names in share]
    assert len(shares) == 3 and all(names == {"a.jsonl"} for names in shares[0])
    assert len(blocks) > 9
    if case == "nothing repeats":
        assert refolded == [] and not any("duplicate" in w for w in tallied[1])
        return
    assert refolded and all("b.jsonl" in names for names in refolded)
    assert len(refolded) < sum("b.jsonl" in names for names in blocks)
    assert any("duplicate" in w for w in tallied[1])


def test_shards_that_meet_at_a_seam_fold_again_only_the_head_of_the_later_one(
    tmp_path: Path, tiny_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big file after the first starts a block of its own, and its head is a block too:
    the calls two shards both recorded sit there, so only that head is folded again."""
    monkeypatch.setattr(streamfold, "_HEAD_BYTES", 12 << 10)  # the seam: 30 rows, 8 KB
    rows = varied_rows(4, 600, ts="none")
    seam = [{**r, "latency_ms": 9.5} for r in rows[-30:]]  # the same calls, other bytes
    paths = [write(tmp_path / "a.jsonl", rows), write(tmp_path / "b.jsonl", seam + new_calls(8))]
    assert paths[1].stat().st_size > 2 * streamfold._BLOCK_BYTES
    refolded: list[list[tuple[str, int, int]]] = []
    real_block = streamfold._fold_block

    def spy_block(block: list, *args: Any) -> Any:
        if args[-1] is not None:  # rows to leave out: folded again
            refolded.append([(p.path.name, p.start, p.end) for _, p in block])
        return real_block(block, *args)

    monkeypatch.setattr(streamfold, "_fold_block", spy_block)
    tallied = read_tally(paths, columns("arm", True), "arm", PRICES, workers=1)
    same(tallied, whole(paths, "arm", PRICES))
    assert any("duplicate rows record calls already recorded" in w for w in tallied[1])
    assert len(refolded) == 1 and len(refolded[0]) == 1
    name, start, end = refolded[0][0]
    assert (name, start) == ("b.jsonl", 0) and 12 << 10 <= end < (12 << 10) + 1024


def test_a_blank_line_still_takes_the_exact_path(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", varied_rows(4, 50, ts="none"))
    path.write_text(path.read_text().replace("\n", "\n\n", 1))
    with pytest.raises(NeedsExactPath):
        streamfold.fold_files([path], columns("arm", False), lambda: None)
    same(read_tally(path, columns("arm", False), "arm", None), whole(path, "arm", None))


def test_two_lines_that_share_a_hash_across_batches_are_read_exactly(
    tmp_path: Path, tiny_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only hashes of the lines are kept, so a line whose hash an earlier batch had is left
    out at once; settle() then reads the line back, finds it is not the same line, and the
    files are read whole: every row is counted, none is called a repeat."""
    rows = [{"task_id": f"t{i}", "arm": "a", "status": "ok", "total_tokens": 10 + i}
            for i in range(400)]  # fmt: skip
    path = write(tmp_path / "a.jsonl", rows)
    lines = path.read_bytes().splitlines()
    one, other = lines[3], lines[380]  # far apart: different batches
    real_hash = hash

    def colliding(value: object) -> int:
        return real_hash(one) if value == other else real_hash(value)

    monkeypatch.setattr(repeat_rules, "hash", colliding, raising=False)
    with pytest.raises(NeedsExactPath):
        streamfold.fold_files([path], columns("arm", False), TokenTally, workers=1)
    tally, warnings = read_tally(path, columns("arm", False), "arm", None, workers=1)
    assert tally.rows == 400 and not any("duplicate" in w for w in warnings)
    assert sum(g["total_tokens"] for g in tally.groups()) == sum(r["total_tokens"] for r in rows)


def test_two_calls_that_share_a_hash_across_files_are_read_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the hash of each call is kept, so a row whose call hash an earlier file had is
    left out at once; settle() then reads the files again, finds two different calls under
    that hash, and the files are read whole: both rows count, neither is called a repeat."""
    first = {"task_id": "t1", "arm": "a", "sample": 0, "total_tokens": 10}
    other = {"task_id": "t2", "arm": "a", "sample": 0, "total_tokens": 20}
    paths = [write(tmp_path / "a.jsonl", [first]), write(tmp_path / "b.jsonl", [other])]
    real = repeat_rules.call_hashes

    def colliding(chunk: bytes, count: int) -> tuple[np.ndarray, np.ndarray] | None:
        found = real(chunk, count)  # every call under one hash
        return None if found is None else (np.full_like(found[0], 12345), found[1])

    monkeypatch.setattr(repeat_rules, "call_hashes", colliding)
    with pytest.raises(NeedsExactPath):
        streamfold.fold_files(paths, columns("arm", False), TokenTally, workers=1)
    tally, warnings = read_tally(paths, columns("arm", False), "arm", None, workers=1)
    assert tally.rows == 2 and not any("duplicate" in w for w in warnings)
    assert sum(g["total_tokens"] for g in tally.groups()) == 30


@pytest.mark.parametrize("workers", [1, 2])
def test_a_call_written_plainly_and_another_way_is_one_call(tmp_path: Path, workers: int) -> None:
    """Plain lines are hashed as msgspec decodes them, others from their identity's tuple: the
    same call, its arm under the guides' name and its sample as text, is still one call."""
    rows = [{"task_id": f"t{i}", "arm": "a", "sample": i % 3, "total_tokens": i} for i in range(9)]
    other = {"task_id": "t4", "strategy": "a", "sample": "1", "role": None, "total_tokens": 99}
    paths = [write(tmp_path / "a.jsonl", rows), write(tmp_path / "b.jsonl", [other, rows[0]])]
    tally, warnings = read_tally(paths, columns("arm", False), "arm", None, workers=workers)
    assert sum(g["total_tokens"] for g in tally.groups()) == sum(range(9))
    assert any(f"{paths[1]}:1 repeats {paths[0]}:5" in w for w in warnings)
    assert any(f"{paths[1]}:2 repeats {paths[0]}:1" in w for w in warnings)


def test_a_call_recorded_again_in_another_file_names_its_first_line(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i}", "arm": "a", "sample": 0, "total_tokens": i} for i in range(5)]
    again = {**rows[3], "latency_ms": 12.0}  # the same call, other bytes
    paths = [
        write(tmp_path / "a.jsonl", rows),
        write(tmp_path / "b.jsonl", [rows[0] | {"task_id": "new"}, again]),
    ]
    folded = streamfold.fold_files(paths, columns("arm", False), TokenTally, workers=1)
    assert folded.tally.rows == 6
    assert folded.warnings == [duplicate_message([(f"{paths[1]}:2", f"{paths[0]}:4")])]


def test_a_line_nested_too_deeply_is_named_by_its_line_in_the_file(
    tmp_path: Path, tiny_batches: None
) -> None:
    """The depth rule in a later block of a later share (a worker's, counting its lines from
    its own start) still names the line by its number in the file."""
    lines = [json.dumps(row) for row in varied_rows(4, 600, ts="none")]
    lines[499] = '{"arm": "a", "meta": ' + "[" * 2000 + "]" * 2000 + "}"
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match=f"^{path}:500: nested too deeply"):
        streamfold.fold_files([path], columns("arm", False), TokenTally, workers=2)


@pytest.mark.parametrize(("brackets", "refused"), [(63, False), (64, True)])
def test_one_line_just_over_the_depth_limit_among_flat_rows_is_refused(
    tmp_path: Path, brackets: int, refused: bool
) -> None:
    """Among thousands of flat rows (one ``{`` each) the line one level over the limit is
    found, and the line at the limit is read: the batch's bracket count alone tells nothing
    is too deep only when it is."""
    lines = [json.dumps(row) for row in varied_rows(4, 3000, ts="none")]
    lines[1234] = '{"arm": "a", "meta": ' + "[" * brackets + "]" * brackets + "}"
    path = tmp_path / "edge.jsonl"
    path.write_text("\n".join(lines) + "\n")
    fold = functools.partial(streamfold.fold_files, [path], columns("arm", False), TokenTally)
    if refused:
        with pytest.raises(UserError, match=f"^{path}:1235: nested too deeply"):
            fold(workers=1)
    else:
        assert fold(workers=1).tally.rows == 3000


def test_a_spill_folder_that_cannot_be_made_sends_the_read_to_the_whole_file_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = varied_rows(4, 200, ts="none")
    paths = [write(tmp_path / "a.jsonl", rows), write(tmp_path / "b.jsonl", rows[:20])]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))
    with pytest.raises(NeedsExactPath):
        streamfold.fold_files(paths, columns("arm", False), TokenTally, workers=1)
    tallied = read_tally(paths, columns("arm", True), "arm", PRICES, workers=1)
    same(tallied, whole(paths, "arm", PRICES))
    assert any("20 duplicate rows" in w for w in tallied[1])


@pytest.mark.parametrize("workers", [1, 2])
def test_small_files_folded_together_equal_the_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Forty small ledgers, folded a few at a time as one batch: some name the arm the
    guides' way (``strategy``: they are not folded with the others), one repeats rows of
    another, one ends torn. Sums, evidence lines and warnings are the whole read's."""
    monkeypatch.setattr(streamfold, "_BATCH_BYTES", 64 << 10)
    rows = varied_rows(12, 1200, ts="none")
    paths = []
    for k in range(40):
        part = rows[k * 30 : (k + 1) * 30]
        if k % 7 == 3:
            part = [{("strategy" if f == "arm" else f): v for f, v in r.items()} for r in part]
        if k == 21:
            part = part[:20] + rows[100:110]  # the rows of file 3, again
        paths.append(write(tmp_path / f"s{k:02d}.jsonl", part))
    with paths[-1].open("a") as fh:
        fh.write('{"task_id": "t1", "arm": "torn')
    no_fallback(monkeypatch)
    folded = []
    real = streamfold._fold_together
    monkeypatch.setattr(
        streamfold, "_fold_together", lambda files, *a: folded.append(len(files)) or real(files, *a)
    )
    tallied = read_tally(tmp_path, columns("arm", True), "arm", PRICES, workers=workers)
    same(tallied, whole(paths, "arm", PRICES))
    assert any("duplicate" in w for w in tallied[1]) and any("torn" in w for w in tallied[1])
    if workers == 1:  # one block, folded twice (it holds the repeats); runs cut at strategy
        assert sum(folded) == 2 * 40 and max(folded) > 2 and 1 in folded


def test_a_line_nested_too_deeply_in_small_files_read_together_names_its_file(
    tmp_path: Path,
) -> None:
    lines = [json.dumps(row) for row in varied_rows(4, 100, ts="none")]
    for k in range(10):
        part = lines[k * 10 : (k + 1) * 10]
        if k == 6:
            part[2] = '{"arm": "a", "meta": ' + "[" * 2000 + "]" * 2000 + "}"
        (tmp_path / f"s{k:02d}.jsonl").write_text("\n".join(part) + "\n")
    paths = sorted(tmp_path.glob("*.jsonl"))
    with pytest.raises(UserError, match=f"^{tmp_path / 's06.jsonl'}:3: nested too deeply"):
        streamfold.fold_files(paths, columns("arm", False), TokenTally, workers=1)


@pytest.mark.parametrize("shards", [1, 2])
def test_the_answered_model_scan_runs_when_a_row_names_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_batches: None, shards: int
) -> None:
    """Rows without ``ts`` (one file, or two): the scan for the model that answered runs
    only when a row names the field, wherever that row is; a value that merely reads
    "model_answered" names nothing."""
    no_fallback(monkeypatch)
    rows = varied_rows(4, 600, ts="none")
    rows[17] = {**rows[17], "note": "model_answered"}
    paths = [tmp_path / f"l{k}.jsonl" for k in range(shards)]
    share = -(-len(rows) // shards)

    def tokens() -> list[str]:
        for k, path in enumerate(paths):
            write(path, rows[k * share : (k + 1) * share])
        return read_tally(paths, columns("arm", False), "arm", None, workers=2)[1]

    scans: list[Any] = []
    real = answered.scan_files
    monkeypatch.setattr(answered, "scan_files", lambda found: scans.append(found) or real(found))
    assert not any("was asked for" in w for w in tokens())
    assert scans == []
    rows[590] = {**rows[590], "status": "ok", "role": "sample", "model": "gpt-main",
                 "model_answered": "broken"}  # fmt: skip
    warnings = tokens()
    assert len(scans) == 1
    assert any("'gpt-main' was asked for" in w for w in warnings)
