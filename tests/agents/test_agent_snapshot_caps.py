"""Each cap of a copy stops it, says which, and what was copied never passes it.

The byte cap counts bytes read, not ``st_size``: a file that grows while it is copied (or a
``/proc`` file that says size 0) cannot carry the copy past it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eloledger.safetree import Caps, copy_tree


def _tree(root: Path) -> None:
    (root / "a").mkdir(parents=True)
    (root / "a" / "big.bin").write_bytes(b"x" * 300_000)
    for i in range(30):
        (root / f"f{i}.txt").write_text("y")
    chain = root / "deep"
    for _ in range(6):
        chain = chain / "d"
    chain.mkdir(parents=True)


@pytest.mark.parametrize(
    ("caps", "words"),
    [
        (Caps(bytes=100_000), "more than 100,000 bytes"),
        (Caps(files=10), "more than 10 files"),
        (Caps(folders=3), "more than 3 folders"),
        (Caps(depth=4), "folders more than 4 deep"),
        (Caps(entries=20), "more than 20 names"),
    ],
)
def test_each_cap_stops_the_copy_and_names_itself(tmp_path: Path, caps: Caps, words: str) -> None:
    _tree(tmp_path / "src")
    report = copy_tree(tmp_path / "src", tmp_path / "dst", caps=caps)
    assert report.tripped == words
    copied = [p for p in (tmp_path / "dst").rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in copied) == report.bytes <= caps.bytes
    assert len(copied) <= caps.files


def test_within_the_caps_everything_is_copied(tmp_path: Path) -> None:
    _tree(tmp_path / "src")
    report = copy_tree(tmp_path / "src", tmp_path / "dst")
    assert report.tripped is None and report.files == 31 and report.bytes == 300_030
    assert (tmp_path / "dst" / "a" / "big.bin").read_bytes() == b"x" * 300_000


def test_a_growing_file_is_counted_by_what_is_read(tmp_path: Path) -> None:
    """A FIFO-free stand-in for a file whose size says nothing: its writer keeps appending
    while it is copied; the copy takes at most the cap."""
    src = tmp_path / "src"
    src.mkdir()
    grow = src / "grow.log"
    grow.write_bytes(b"z" * 10)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer: appends until the copy is done
        os.close(reader)
        with open(grow, "ab") as fh:
            os.write(writer, b"!")
            while True:
                fh.write(b"z" * 65536)
                fh.flush()
    os.close(writer)
    os.read(reader, 1)
    try:
        report = copy_tree(src, tmp_path / "dst", caps=Caps(bytes=1 << 20))
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(reader)
    copied = (tmp_path / "dst" / "grow.log").stat().st_size
    assert copied == report.bytes <= 1 << 20
