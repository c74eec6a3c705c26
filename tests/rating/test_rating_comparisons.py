"""The comparisons reader: both row shapes, CSV/JSONL/gzip, fast and careful paths agree,
and every bad input is a UserError naming file:line."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from eloledger.errors import UserError
from eloledger.rating.comparisons import Comparisons, read_comparisons


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_winner_loser_csv(tmp_path: Path) -> None:
    c = read_comparisons(
        write(tmp_path / "c.csv", "task_id,winner,loser\nt1,x,y\nt1,y,z\nt2,z,x\n")
    )
    assert c.players == ["x", "y", "z"]
    assert c.tasks == ["t1", "t2"]
    assert c.i.tolist() == [0, 1, 2] and c.j.tolist() == [1, 2, 0]
    assert c.outcome.tolist() == [1.0, 1.0, 1.0]
    assert c.weight.tolist() == [1.0, 1.0, 1.0]
    assert c.task.tolist() == [0, 0, 1]
    assert c.games().tolist() == [2, 2, 2] and c.wins().tolist() == [1.0, 1.0, 1.0]


def test_soft_outcomes_weights_crlf(tmp_path: Path) -> None:
    c = read_comparisons(
        write(tmp_path / "c.csv", "task_id,a,b,outcome,weight\r\nq,m,n,0.25,2\r\nq,n,m,0.5,1\r\n")
    )
    assert c.outcome.tolist() == [0.25, 0.5]
    assert c.weight.tolist() == [2.0, 1.0]
    assert c.wins().tolist() == [0.25 + 0.5, 0.75 + 0.5]


def test_fast_and_quoted_paths_agree(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = [
        (f"t{rng.integers(20)}", f"p{a}", f"p{(a + 1 + rng.integers(4)) % 6}", rng.integers(3) / 2)
        for a in rng.integers(0, 6, 300)
    ]
    plain = "task_id,a,b,outcome\n" + "".join(f"{t},{a},{b},{o}\n" for t, a, b, o in rows)
    quoted = "task_id,a,b,outcome\n" + "".join(f'"{t}","{a}",{b},{o}\n\n' for t, a, b, o in rows)
    fast = read_comparisons(write(tmp_path / "fast.csv", plain))
    slow = read_comparisons(write(tmp_path / "slow.csv", quoted))
    for name in ("task", "i", "j", "outcome", "weight"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.players == slow.players and fast.tasks == slow.tasks


def test_name_with_comma_via_quotes(tmp_path: Path) -> None:
    c = read_comparisons(write(tmp_path / "c.csv", 'task_id,winner,loser\n1,"gpt, big",small\n'))
    assert c.players == ["gpt, big", "small"]


def test_jsonl_and_gzip(tmp_path: Path) -> None:
    text = '{"task_id": 1, "a": "x", "b": "y", "outcome": 0.5}\n\n{"task": 2, "winner": "y", "loser": "x", "weight": 3}\n'
    c = read_comparisons(write(tmp_path / "c.jsonl", text))
    assert c.players == ["x", "y"] and c.tasks == ["1", "2"]
    assert c.outcome.tolist() == [0.5, 1.0] and c.weight.tolist() == [1.0, 3.0]
    gz = tmp_path / "c.csv.gz"
    gz.write_bytes(gzip.compress(b"task_id,winner,loser\nt,x,y\n"))
    assert read_comparisons(gz).players == ["x", "y"]


def test_from_records_and_arrays() -> None:
    c = Comparisons.from_records(
        [
            {"task_id": "t", "winner": "a", "loser": "b"},
            {"task_id": "t", "a": "b", "b": "c", "outcome": 0.0},
        ],
        players=["c"],
    )
    assert c.players == ["c", "a", "b"]
    assert c.i.tolist() == [1, 2] and c.j.tolist() == [2, 0]
    d = Comparisons.from_arrays([0, 0], ["a", "b"], ["b", "a"], [1.0, 0.5], [1.0, 2.0])
    assert d.wins().tolist() == [1.5, 0.5]  # counts, unweighted
    with pytest.raises(UserError, match="record 2: outcome 1.5"):
        Comparisons.from_records(
            [
                {"task_id": 1, "a": "x", "b": "y", "outcome": 1},
                {"task_id": 1, "a": "x", "b": "y", "outcome": 1.5},
            ]
        )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "task_id,a,b,outcome\nt,x,y,1\nt,x,y,1.5\n",
            r"c\.csv:3: outcome 1\.5 is outside \[0, 1\]",
        ),
        ("task_id,a,b,outcome\nt,x,y,nan\n", r"c\.csv:2: outcome nan is outside"),
        ("task_id,a,b,outcome\nt,x,y,-0.1\n", r"c\.csv:2: outcome -0\.1"),
        (
            "task_id,a,b,outcome\nt,x,y,1\nt,x,y,yes\n",
            r"c\.csv:3: outcome must be a number, got 'yes'",
        ),
        ("task_id,a,b,outcome\nt,x,y,1\nt,x,y\n", r"c\.csv:3: expected 4 fields"),
        ("task_id,a,b,outcome\nt,x,y,1\n\nt,x,y,1,9\n", r"c\.csv:4: expected 4 fields"),
        # a short line and a long one whose fields add up: never read shifted by one field
        ("task_id,winner,loser\nt1,x\nt2,y,z,w\n", r"c\.csv:2: expected 3 fields"),
        ("task_id,winner,loser,judge\nt,x,y,z\n", r"c\.csv:1: unknown column\(s\) 'judge'"),
        ("task_id,winner\nt,x\n", r"c\.csv:1: header .* is not a comparisons header"),
        ("task_id,winner,loser\n", r"c\.csv: no comparisons after the header"),
        ("", r"c\.csv: file is empty"),
        ("task_id,winner,loser\nt,x,x\n", r"c\.csv: every comparison pits a player against itself"),
        ("task_id,winner,loser,weight\nt,x,y,1\nt,y,x,-2\n", r"c\.csv:3: weight -2\.0 must be"),
        ("task_id,winner,loser\nt,x,y\n,y,x\n", r"c\.csv:3: empty task_id"),
    ],
)
def test_bad_csv_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "c.csv", text)
    with pytest.raises(UserError, match=message) as info:
        read_comparisons(path)
    assert info.value.fix


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"task_id": 1, "winner": "x", "loser": "y"}\n{"task_id": 1, "winner": "x"\n',
            r"c\.jsonl:2: not valid JSON",
        ),
        (
            '{"task_id": 1, "winner": "x", "loser": "y", "why": "z"}\n',
            r"c\.jsonl:1: unknown field\(s\) 'why'",
        ),
        ("[1, 2]\n", r"c\.jsonl:1: expected a JSON object"),
        (
            '{"task_id": 1, "a": "x", "b": "y", "outcome": 2}\n',
            r"c\.jsonl:1: outcome 2\.0 is outside",
        ),
        ('{"a": "x", "b": "y", "outcome": 1}\n', r"c\.jsonl:1: missing task_id"),
    ],
)
def test_bad_jsonl_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        read_comparisons(write(tmp_path / "c.jsonl", text))


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        read_comparisons(tmp_path / "absent.csv")
    with pytest.raises(UserError, match="is a folder"):
        read_comparisons(tmp_path)


def test_self_comparisons_are_dropped_and_counted(tmp_path: Path) -> None:
    c = read_comparisons(
        write(tmp_path / "c.csv", "task_id,a,b,outcome\nt,x,x,0.5\nt,x,y,1\nu,y,y,1\n")
    )
    assert c.dropped_self == 2 and len(c) == 1
    assert c.lines.tolist() == [3]


def _reference(
    path: Path,
) -> tuple[list[str], list[str], list[int], list[int], list[int], list[float]]:
    """The obvious csv-module reader, to check the vectorised one against."""
    import csv

    players: dict[str, int] = {}
    tasks: dict[str, int] = {}
    t, i, j, o = [], [], [], []
    with open(path, newline="") as fh:
        rows = csv.reader(fh)
        next(rows)
        for task, a, b, out in rows:
            t.append(tasks.setdefault(task, len(tasks)))
            i.append(players.setdefault(a, len(players)))
            j.append(players.setdefault(b, len(players)))
            o.append(float(out))
    return list(players), list(tasks), t, i, j, o


@pytest.mark.parametrize("pad", [0, 20, 70])
def test_vectorised_reader_matches_reference(tmp_path: Path, pad: int) -> None:
    """Many distinct task ids (hash-bucket collisions happen); names short enough to be their
    own key (pad 0), hashed and verified (pad 20), or longer than the vectorised path takes
    (pad 70: the dict path takes over) — always the same result as the csv module."""
    rng = np.random.default_rng(4)
    m = 60_000
    pad = "x" * pad
    task = rng.integers(0, 40_000, m)
    a = rng.integers(0, 300, m)
    b = (a + rng.integers(1, 300, m)) % 300
    out = rng.choice(["0", "1", "0.5", "0.25"], m)
    path = tmp_path / "big.csv"
    path.write_text(
        "task_id,a,b,outcome\n"
        + "".join(
            f"q{t},m{x}{pad},m{y}{pad},{o}\n" for t, x, y, o in zip(task, a, b, out, strict=True)
        )
    )
    c = read_comparisons(path)
    players, tasks, t, i, j, o = _reference(path)
    assert c.players == players and c.tasks == tasks
    assert c.task.tolist() == t and c.i.tolist() == i and c.j.tolist() == j
    assert c.outcome.tolist() == o
    assert c.lines[0] == 2 and c.lines[-1] == m + 1


def test_names_that_decode_alike_are_one_player(tmp_path: Path) -> None:
    """Two byte strings that are not UTF-8 and decode to the same text ("x\\ufffd") are one
    player, as the careful csv-module read has them, never two players with one name."""
    path = tmp_path / "c.csv"
    path.write_bytes(b"task_id,winner,loser\nt1,x\xff,y\nt2,y,x\xfe\nt3,x\xff,y\n")
    c = read_comparisons(path)
    assert c.players == ["x\ufffd", "y"]
    assert c.i.tolist() == [0, 1, 0] and c.j.tolist() == [1, 0, 1]
