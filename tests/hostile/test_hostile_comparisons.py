"""Hostile comparisons files through the real CLI (a fresh ``eloledger`` process): every bad
input is one line naming the file (and line) with a fix, exit status 2 — no traceback, no hang.
Good but unusual inputs (gzip, a BOM, a pipe with a writer) are read."""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).with_name("eloledger"))
GOOD = "task_id,a,b,outcome\nt1,x,y,1\nt2,y,x,1\nt3,x,y,0.5\n"


def elo(*argv: str, user: list[str] | None = None, stdin: bytes | None = None):
    return subprocess.run(
        [*(user or []), CLI, "elo", *argv],
        capture_output=True,
        input=stdin,
        timeout=60,
        env={**os.environ, "COLUMNS": "120"},
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err and proc.stdout == b""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("eloledger: error: "), lines
    assert "(fix: " in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_unreadable_file(tmp_path: Path) -> None:
    """A file its reader may not open: one line naming it, wherever the checkout lives.

    Root reads anything, so as root the CLI runs without the two capabilities that let it
    (``setpriv`` drops them from the bounding set): it stays uid 0 and can still read the
    checkout and the virtual environment even under a 0700 folder, which ``nobody`` could not.
    """
    path = tmp_path / "comps.csv"
    path.write_text(GOOD)
    path.chmod(0)
    user: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv")
        drop = "-dac_override,-dac_read_search"
        user = ["setpriv", f"--inh-caps={drop}", f"--bounding-set={drop}"]
    assert_one_line_error(elo(str(path), user=user), str(path), "Permission denied")


def test_fifo_without_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "comps.csv"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert_one_line_error(elo(str(fifo)), str(fifo), "FIFO")


def test_pipe_with_a_writer_is_read() -> None:
    proc = elo("/dev/stdin", "--format", "csv", stdin=GOOD.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines()[0].startswith("name,elo,")


def test_directory_and_device(tmp_path: Path) -> None:
    # a folder is read as its comparisons files now; an empty one is an error
    assert_one_line_error(elo(str(tmp_path)), str(tmp_path), "holds no comparisons file")
    assert_one_line_error(elo("/dev/zero"), "/dev/zero", "device")
    assert_one_line_error(elo(str(tmp_path / "nope.csv")), "nope.csv: no such file")


def test_gzip_good_and_damaged(tmp_path: Path) -> None:
    good = tmp_path / "comps.csv.gz"
    good.write_bytes(gzip.compress(GOOD.encode()))
    proc = elo(str(good), "--format", "csv")
    assert proc.returncode == 0 and proc.stdout.decode().count("\n") == 3, proc.stderr.decode()
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(gzip.compress(GOOD.encode())[:20])
    assert_one_line_error(elo(str(bad)), str(bad), "damaged gzip")


def test_bom_is_accepted_in_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = tmp_path / "bom.csv"
    csv_path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_bytes(
        b'\xef\xbb\xbf{"task_id": "t1", "winner": "x", "loser": "y"}\n'
        b'{"task_id": "t2", "winner": "y", "loser": "x"}\n'
    )
    for path in (csv_path, jsonl):
        proc = elo(str(path), "--format", "csv")
        assert proc.returncode == 0, proc.stderr.decode()
        assert {ln.split(",")[0] for ln in proc.stdout.decode().splitlines()[1:]} == {"x", "y"}


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        (b"", ("file is empty",)),
        (b"\n\n  \n", ("file is empty",)),
        (b"task_id,a,b,outcome\n", ("no comparisons after the header",)),
        (b"task_id,a,b,outcome\nt1,x,y,2\n", (":2: outcome 2.0 is outside [0, 1]",)),
        (b"task_id,a,b,outcome\nt1,x,y,1\nt2,x,y,-1\n", (":3: outcome -1.0",)),
        (b"task_id,a,b,outcome\nt1,x,y,nan\n", (":2: outcome nan",)),
        (b"task_id,a,b,outcome\nt1,x,y,inf\n", (":2: outcome inf",)),
        (b"task_id,a,b,outcome\nt1,x,y,yes\n", (":2: outcome must be a number, got 'yes'",)),
        (b"task_id,a,b,outcome\nt1,x,y,\n", (":2: outcome must be a number",)),
        (b'{"task_id": "t", "a": "x", "b": "y", "outcome": true}\n', (":1: outcome must be",)),
        (b"\xff\xfet\x00a\x00s\x00k\x00", ("not UTF-8 text",)),
        (b"\x00\x01\x02binary", ("not UTF-8 text",)),
        (b"name,score\nx,1\n", (":1: unknown column(s)",)),
    ],
)
def test_bad_contents(tmp_path: Path, body: bytes, fragments: tuple[str, ...]) -> None:
    suffix = ".jsonl" if body.startswith(b"{") else ".csv"
    path = tmp_path / f"comps{suffix}"
    path.write_bytes(body)
    assert_one_line_error(elo(str(path)), str(path), *fragments)
