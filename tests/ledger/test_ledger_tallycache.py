"""A ledger in writing order keeps its tally in the cache folder (ledger/tallycache.py): read
again after rows were appended, only the new bytes are folded, and the result is what a whole
read gives. Another file, a rewritten, shortened or edited one, other columns, grouping or
prices, rows out of order, or a cache file others could write: the ledger is read whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_ledger_tally import PRICES, columns, same, varied_rows, whole, write

from eloledger.ledger import answered, tallycache
from eloledger.ledger import tally as tally_module
from eloledger.ledger.tally import read_tally


@pytest.fixture
def folds(monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """Every ledger is worth a cache here; records each whole fold and each fold from a start."""
    monkeypatch.setattr(tallycache, "SMALLEST", 0)
    monkeypatch.setattr(tally_module, "_BATCH_BYTES", 2048)
    seen: dict[str, list] = {"whole": [], "from": []}
    real_whole, real_into = tally_module._fold_whole, tally_module._fold_into

    def fold_whole(path: Path, *args: Any) -> Any:
        seen["whole"].append(path)
        return real_whole(path, *args)

    def fold_into(tally: Any, path: str, start: int, *args: Any) -> Any:
        if tally.rows:  # (a fresh fold starts from an empty tally)
            seen["from"].append(start)
        return real_into(tally, path, start, *args)

    monkeypatch.setattr(tally_module, "_fold_whole", fold_whole)
    monkeypatch.setattr(tally_module, "_fold_into", fold_into)
    return seen


def rows_from(first: int, n: int, seed: int) -> list[dict]:
    """Rows in writing order whose ``ts`` go on after those of rows ``[0, first)``."""
    rows = varied_rows(seed, first + n)[first:]
    for row in rows:
        row["ts"] += 0.5  # not a copy of an earlier row's time: strictly later
    return rows


def append(path: Path, rows: list[dict]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))


def read(path: Path, folder: Path, by: str = "arm", prices: dict | None = None) -> Any:
    return read_tally(path, columns(by, bool(prices)), by, prices, workers=2, cache=lambda: folder)


def test_a_grown_ledger_folds_only_what_was_appended(tmp_path: Path, folds: dict) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(4, 500))
    folder = tmp_path / "cache"
    same(read(path, folder), whole(path, "arm", None))
    assert len(folds["whole"]) == 1 and len(list(folder.iterdir())) == 1
    size = path.stat().st_size
    append(path, rows_from(500, 200, 4))
    same(read(path, folder), whole(path, "arm", None))
    assert len(folds["whole"]) == 1 and folds["from"] == [size]  # only the new bytes
    same(read(path, folder), whole(path, "arm", None))  # nothing new: nothing folded
    assert len(folds["whole"]) == 1 and folds["from"] == [size, path.stat().st_size]
    assert oct(next(folder.iterdir()).stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(
    "change", ["rewritten", "shortened", "last line edited", "first line edited", "other prices"]
)
def test_a_changed_ledger_or_other_reading_is_folded_whole(
    tmp_path: Path, folds: dict, change: str
) -> None:
    rows = varied_rows(5, 400)
    path = write(tmp_path / "l.jsonl", rows)
    folder = tmp_path / "cache"
    read(path, folder, prices=PRICES)
    prices: dict | None = PRICES
    text = path.read_text()
    if change == "rewritten":  # a new file (inode) with the same bytes and more
        write(tmp_path / "new.jsonl", rows + rows_from(400, 10, 5)).replace(path)
    elif change == "shortened":
        path.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 1])
    elif change == "last line edited":  # same file, same size, other bytes at the end
        with path.open("r+b") as fh:
            fh.seek(len(text.encode()) - 3)
            fh.write(b"9" if text[-3] != "9" else b"8")
    elif change == "first line edited":
        with path.open("r+b") as fh:
            fh.seek(text.index('"task_id": "t') + len('"task_id": "t'))
            fh.write(b"9")
    else:
        prices = {**PRICES, "new-model": PRICES[next(iter(PRICES))]}
    append(path, rows_from(400, 50, 5))
    same(read(path, folder, prices=prices), whole(path, "arm", prices))
    assert len(folds["whole"]) == 2 and folds["from"] == []


def test_rows_appended_out_of_writing_order_are_read_with_the_duplicate_rules(
    tmp_path: Path, folds: dict
) -> None:
    rows = varied_rows(6, 300)
    path = write(tmp_path / "l.jsonl", rows)
    folder = tmp_path / "cache"
    read(path, folder)
    append(path, [{**rows[0], "total_tokens": 5}, rows[1]])  # an old time, then a copy
    tally, warnings = read(path, folder)
    same((tally, warnings), whole(path, "arm", None))
    assert any("1 duplicate row" in w for w in warnings)


def test_a_torn_last_line_is_folded_once_it_is_whole(tmp_path: Path, folds: dict) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(7, 300))
    folder = tmp_path / "cache"
    line = json.dumps(rows_from(300, 1, 7)[0]) + "\n"
    append_text = path.open("a", encoding="utf-8")
    append_text.write(line[:20])  # a writer mid-line
    append_text.close()
    tally, warnings = read(path, folder)
    assert tally.rows == 300 and "torn last line" in warnings[0]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line[20:])
    same(read(path, folder), whole(path, "arm", None))
    assert len(folds["whole"]) == 1 and len(folds["from"]) == 1


def test_a_cache_file_others_could_write_is_never_read(tmp_path: Path, folds: dict) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(8, 200))
    folder = tmp_path / "cache"
    read(path, folder)
    entry = next(folder.iterdir())
    entry.chmod(0o666)
    same(read(path, folder), whole(path, "arm", None))
    assert len(folds["whole"]) == 2
    entry.write_bytes(b"not a pickle")  # (written again 0600 by the read above)
    same(read(path, folder), whole(path, "arm", None))
    assert len(folds["whole"]) == 3


def test_a_cache_entry_that_is_a_symlink_is_never_read(tmp_path: Path, folds: dict) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(11, 200))
    folder = tmp_path / "cache"
    read(path, folder)
    entry = next(folder.iterdir())
    entry.rename(tmp_path / "elsewhere.pickle")
    entry.symlink_to(tmp_path / "elsewhere.pickle")
    same(read(path, folder), whole(path, "arm", None))
    assert len(folds["whole"]) == 2


def test_a_ledger_replaced_while_it_is_folded_keeps_no_tally(
    tmp_path: Path, folds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "l.jsonl", varied_rows(12, 200))
    other = write(tmp_path / "other.jsonl", varied_rows(13, 250))
    real = tally_module._fold_whole

    def replaced_meanwhile(*args: Any) -> Any:
        folded = real(*args)
        other.replace(path)  # a new file under the name, after its bytes were read
        return folded

    monkeypatch.setattr(tally_module, "_fold_whole", replaced_meanwhile)
    folder = tmp_path / "cache"
    read(path, folder)
    assert not folder.exists() or not list(folder.glob("*.pickle"))


def test_the_folder_keeps_the_tallies_used_last(
    tmp_path: Path, folds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tallycache, "KEEP", 3)
    folder = tmp_path / "cache"
    paths = [write(tmp_path / f"l{k}.jsonl", varied_rows(k, 50)) for k in range(5)]
    for path in paths:
        read(path, folder)
    read(paths[0], folder)  # (pruned already: folded whole, kept again)
    assert len(list(folder.glob("*.pickle"))) == 3
    assert len(folds["whole"]) == 6
    read(paths[4], folder)  # still kept: nothing folded whole
    assert len(folds["whole"]) == 6


def test_the_folder_stays_within_its_bytes_the_newest_tally_always_kept(
    tmp_path: Path, folds: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    paths = [write(tmp_path / f"l{k}.jsonl", varied_rows(k, 50)) for k in range(3)]
    read(paths[0], folder)
    one = next(folder.iterdir()).stat().st_size
    monkeypatch.setattr(tallycache, "BUDGET", one + 1)  # room for one tally, not two
    read(paths[1], folder)
    read(paths[2], folder)
    assert len(list(folder.glob("*.pickle"))) == 1
    read(paths[2], folder)  # the one kept is the newest: nothing folded whole
    assert len(folds["whole"]) == 3
    monkeypatch.setattr(tallycache, "BUDGET", 1)  # smaller than any tally: the newest stays
    read(paths[0], folder)
    assert len(list(folder.glob("*.pickle"))) == 1 and len(folds["whole"]) == 4


def test_the_answered_model_scan_runs_only_when_a_line_names_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tally_module, "_BATCH_BYTES", 2048)
    rows = varied_rows(9, 400)
    path = write(tmp_path / "l.jsonl", rows)
    scans: list[Any] = []
    real = answered.scan_files

    def scan(paths: Any) -> Any:
        scans.append(paths)
        return real(paths)

    monkeypatch.setattr(answered, "scan_files", scan)
    read_tally(path, columns("arm", False), "arm", None, workers=2)
    assert scans == []  # no line names model_answered: no second read of the file
    rows[-1] = {**rows[-1], "status": "ok", "role": "sample", "model": "gpt-main",
                "model_answered": "broken"}  # fmt: skip
    write(path, rows)
    _, warnings = read_tally(path, columns("arm", False), "arm", None, workers=2)
    assert len(scans) == 1  # the last line, in the second worker's slice
    assert any("'gpt-main' was asked for" in w for w in warnings)


def test_the_tokens_command_keeps_its_tally_in_the_user_cache_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    path = tmp_path / "big.jsonl"
    rows = varied_rows(10, 2000)
    with path.open("w", encoding="utf-8") as fh:
        for k in range(tallycache.SMALLEST // (2000 * 250) + 1):  # over the cache's floor
            fh.write("".join(json.dumps({**r, "ts": r["ts"] + k * 1e7}) + "\n" for r in rows))
    assert path.stat().st_size >= tallycache.SMALLEST

    def tokens(*flags: str) -> dict:
        command = [sys.executable, "-m", "eloledger", "tokens", str(path), "--format", "json"]
        done = subprocess.run([*command, *flags], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    cache = home / ".cache" / "eloledger" / "tallies"
    fresh = tokens("--no-cache")
    assert not cache.exists()
    assert tokens() == fresh and len(list(cache.iterdir())) == 1
    call = {"task_id": "t1", "arm": "single", "status": "ok", "prompt_tokens": 5,
            "completion_tokens": 5, "total_tokens": 10, "ts": 1e12}  # fmt: skip
    append(path, [call])
    grown = tokens()
    assert grown == tokens("--no-cache")
    assert grown["billed_total_tokens"] == fresh["billed_total_tokens"] + 10
