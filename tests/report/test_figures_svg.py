"""`elo --plot` figures for a report: the TUI's best-of-k reference line and frontier, one
letter per arm (the TUI's), the legend outside the data, text kept as text, the same bytes
for the same input, and the path written said on stderr."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from eloledger.cli import main
from eloledger.tables import arm_letters

SVG = "{http://www.w3.org/2000/svg}"
REFERENCE = "best-of-k from best_of_1: +400 Elo per 10× tokens"  # the TUI legend's words


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def group(root: ET.Element, gid: str) -> ET.Element:
    found = next((g for g in root.iter(f"{SVG}g") if g.get("id") == gid), None)
    assert found is not None, f"no <g id={gid!r}> in the figure"
    return found


def box(element: ET.Element) -> tuple[float, float, float, float]:
    """x0, y0, x1, y1 of the first path under ``element``."""
    path = next(element.iter(f"{SVG}path"))
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def test_elo_plot_has_the_reference_as_text_outside_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg = tmp_path / "elo.svg"
    assert main(["elo", "--example", "--plot", str(svg), "--format", "json"]) == 0
    assert f"figure written to {svg}" in capsys.readouterr().err
    root = ET.parse(svg).getroot()
    words = texts(root)
    assert REFERENCE in words  # a <text> element, not glyph paths (svg.fonttype = none)
    group(root, "line-reference")
    group(root, "line-frontier")
    letters = arm_letters(["best_of_1", "best_of_2", "best_of_4", "best_of_8", "long_cot"])
    for name, letter in letters.items():  # the point's letter and its legend entry
        assert letter in words and f"{letter} {name}" in words
    axes = box(group(root, "patch_2"))  # the axes' background
    legend = box(group(root, "legend_1"))
    assert legend[0] > axes[2], (legend, axes)  # right of the data, never over it


def test_figures_are_the_same_bytes_for_the_same_input(tmp_path: Path) -> None:
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    for path in (first, second):
        assert main(["elo", "--example", "--plot", str(path), "--format", "json"]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert b"<dc:date>" not in first.read_bytes()
