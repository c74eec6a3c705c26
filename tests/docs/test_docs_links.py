"""Every relative link in the README and docs/ reaches a file, and its #anchor a heading there:
the README's sections moved into docs/, and a link left behind is a dead end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {anchor(line.lstrip("#")) for line in lines if re.match(r"#{1,6} ", line)}


def dead_links(path: Path) -> list[str]:
    dead = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not ours to check offline
        name, _, fragment = target.partition("#")
        file = (path.parent / name).resolve() if name else path
        if not file.exists():
            dead.append(f"{path.name}: {target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            dead.append(f"{path.name}: {target}: no such heading in {file.name}")
    return dead


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.name)
def test_every_relative_link_reaches_its_file_and_heading(path: Path) -> None:
    assert not dead_links(path)


def test_a_dead_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n## The `sim`: faults\n", encoding="utf-8")
    doc = tmp_path / "b.md"
    doc.write_text(
        "[ok](a.md#the-sim-faults) [gone](c.md) [typo](a.md#the-sim) [self](#nowhere)\n",
        encoding="utf-8",
    )
    assert dead_links(doc) == [
        "b.md: c.md: no such file",
        "b.md: a.md#the-sim: no such heading in a.md",
        "b.md: #nowhere: no such heading in b.md",
    ]
